/** The HTTP API's recurring schedule bodies (docs/cron.md); re-exported by types.ts. */
import type { BackoffPolicy } from './types.js';

/** PUT /v1/schedules/:id: create or change a recurring schedule (docs/cron.md). */
export interface RecurringRequest {
  topic: string;
  payload?: unknown;
  /** 5 fields, or 6 with seconds first. Give this or `everyMs`. */
  cron?: string;
  /** IANA time zone of `cron`. Default 'UTC'. */
  tz?: string;
  /** A fixed interval, at least 1000 ms. */
  everyMs?: number;
  startAt?: number | string;
  endAt?: number | string;
  limit?: number;
  /** Default 'once'. */
  misfire?: 'skip' | 'once' | 'all';
  ttrMs?: number;
  maxAttempts?: number;
  backoff?: Partial<BackoffPolicy>;
  /** Push every occurrence to this URL, whatever its topic (docs/push.md, "Per-task url"). */
  url?: string;
  /** The priority of every occurrence: -100..100, default 0. */
  priority?: number;
}

/** PUT /v1/schedules: many schedules in one call, each as PUT /v1/schedules/:id. */
export type RecurringManyRequest = Array<RecurringRequest & { id: string }>;

export interface RecurringManyResponse {
  /** One per definition, in request order. */
  results: Array<{ schedule: RecurringView; created: boolean; changed: boolean }>;
}

export interface RecurringView {
  id: string;
  topic: string;
  payload: unknown;
  cron: string | null;
  tz: string;
  everyMs: number | null;
  startAt: number | null;
  endAt: number | null;
  limit: number | null;
  misfire: 'skip' | 'once' | 'all';
  ttrMs: number;
  maxAttempts: number;
  backoff: BackoffPolicy;
  /** The push target of every occurrence, or null. */
  url: string | null;
  /** The priority of every occurrence (0 by default). */
  priority: number;
  paused: boolean;
  /** The next occurrence not yet created as a task; null once the schedule has ended. */
  nextAt: number | null;
  /** The latest occurrence created (task id `<id>:<lastAt>`). */
  lastAt: number | null;
  count: number;
  createdAt: number;
  updatedAt: number;
}

export interface RecurringResponse {
  schedule: RecurringView;
  /** PUT only: false when the same definition was stored already (nothing changed). */
  changed?: boolean;
}

/** GET /v1/schedules?limit=&after=: a page of schedules by id. */
export interface RecurringListResponse {
  schedules: RecurringView[];
  /** Pass as `after` for the next page; null when this page was the last. */
  next: string | null;
}

/** POST /v1/schedules/preview: when a rule (the rule fields of a definition) would fire, for a schedule not stored. */
export type RecurringPreviewRequest = Pick<RecurringRequest, 'cron' | 'tz' | 'everyMs' | 'startAt' | 'endAt' | 'limit'> & {
  /** How many times (1 to 1000, default 10). */
  n?: number;
};

/** GET /v1/schedules/:id/next and POST /v1/schedules/preview. */
export interface RecurringNextResponse {
  /** The next occurrence times (epoch ms) at or after now. */
  times: number[];
}

export interface RecurringDeleteResponse {
  deleted: true;
}
