/**
 * The delayq HTTP client (`delayq/client`): the library's method names over the HTTP API,
 * on fetch (keep-alive by default in Node). It imports only src/client and src/wire, so a
 * service using it loads nothing of the server or the stores.
 */
import { CLIENT_ERROR_CODES, isWireErrorCode } from '../wire/error-codes.js';
import type {
  AckResponse,
  ExtendResponse,
  CancelDeadManyResponse,
  BatchItemResult,
  BatchResponse,
  AckManyResponse,
  CancelManyResponse,
  CancelResponse,
  DeliveryView,
  ErrorBody,
  HealthResponse,
  ListResponse,
  NackResponse,
  PushDeleteResponse,
  RecurringDeleteResponse,
  RecurringListResponse,
  RecurringNextResponse,
  RecurringPreviewRequest,
  RecurringRequest,
  RecurringResponse,
  RecurringManyRequest,
  RecurringManyResponse,
  RecurringView,
  PushListResponse,
  PushSubscriptionRequest,
  PushSubscriptionResponse,
  PushSubscriptionView,
  ReserveResponse,
  RescheduleResponse,
  RetryDeadManyResponse,
  ScheduleRequest,
  TopicLimitsDeleteResponse,
  TopicLimitsRequest,
  TopicLimitsResponse,
  TopicLimitsView,
  TopicPauseResponse,
  TopicPurgeResponse,
  TopicPurgeState,
  ScheduleResponse,
  StatsResponse,
  TaskState,
  TaskView,
  TimelineResponse,
} from '../wire/types.js';
import { DelayQClientError } from './errors.js';

export const DEFAULT_SERVER_URL = 'http://127.0.0.1:7420';

export interface DelayQClientOptions {
  /** The server, e.g. http://127.0.0.1:7420 (the default). */
  url?: string;
  /** Sent as `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Per request; a reserve gets its waitMs on top. Default 30 s. */
  timeoutMs?: number;
  /** A fetch to use instead of the global one (tests, proxies). */
  fetch?: typeof fetch;
}

/** A time: epoch ms, a Date, or an ISO 8601 string. */
export type ClientTime = number | string | Date;

export type ClientScheduleInput = Omit<ScheduleRequest, 'runAt'> & { runAt?: ClientTime };

export interface ClientWhen {
  delayMs?: number;
  runAt?: ClientTime;
}

export interface ClientListOptions {
  topic?: string;
  state?: TaskState;
  limit?: number;
  afterId?: string;
}

export interface ClientStatsOptions {
  topicLimit?: number;
  /** The topic after which the page of topics starts (the last page's `topicsNext`). */
  after?: string;
}

export interface ClientSchedulePageOptions {
  limit?: number;
  afterId?: string;
}

/** How much longer than other calls `topics.purge` waits for its answer (10 minutes). */
export const PURGE_EXTRA_TIMEOUT_MS = 600_000;

/** The server's largest page of push subscriptions (MAX_PUSH_PAGE): `listPush` follows pages of this size. */
const PUSH_PER_REQUEST = 1_000;
/** The server's largest page of schedules (MAX_SCHEDULE_PAGE): `schedules.list` follows pages of this size. */
const SCHEDULES_PER_REQUEST = 1_000;

export interface ClientReserveOptions {
  max?: number;
  waitMs?: number;
  ttrMs?: number;
  /** Aborting ends the wait; the call then resolves with []. */
  signal?: AbortSignal;
}

export interface ClientNackOptions {
  delayMs?: number;
  error?: string;
}

type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export class DelayQClient {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly timeoutMs: number;
  private readonly fetch: typeof fetch;

  constructor(options: DelayQClientOptions = {}) {
    this.base = (options.url ?? DEFAULT_SERVER_URL).replace(/\/+$/, '');
    this.headers = options.token ? { authorization: `Bearer ${options.token}` } : {};
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.fetch = options.fetch ?? globalThis.fetch;
  }

  /** Schedules one task; `created` is false when the id already existed (nothing changed). */
  schedule(input: ClientScheduleInput): Promise<ScheduleResponse> {
    return this.call<ScheduleResponse>('POST', '/v1/tasks', toWireTask(input));
  }

  /** Schedules many tasks in one request; one result per task, `{error}` for the ones refused. */
  async scheduleMany(inputs: readonly ClientScheduleInput[]): Promise<BatchItemResult[]> {
    const { results } = await this.call<BatchResponse>('POST', '/v1/tasks/batch', { tasks: inputs.map(toWireTask) });
    return results;
  }

  /** Cancels a pending task. True if it was pending; false if unknown or no longer pending. */
  async cancel(id: string): Promise<boolean> {
    return this.falseWhenNotPending(this.call<CancelResponse>('DELETE', `/v1/tasks/${idSegment(id)}`));
  }

  /** Cancels several tasks in one request: one answer per id, as `cancel` would give. */
  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    const { results } = await this.call<CancelManyResponse>('POST', '/v1/tasks/cancel', { ids });
    return results.map((r) => r.cancelled);
  }

  /** Moves a pending task to a new time. True if it was pending; false if unknown or no longer pending. */
  async reschedule(id: string, when: ClientWhen): Promise<boolean> {
    const body = { ...when, ...(when.runAt !== undefined ? { runAt: toWireTime(when.runAt) } : {}) };
    return this.falseWhenNotPending(this.call<RescheduleResponse>('PATCH', `/v1/tasks/${idSegment(id)}`, body));
  }

  /** The task, or null if there is none with this id. */
  async get<P = unknown>(id: string): Promise<TaskView<P> | null> {
    try {
      return await this.call<TaskView<P>>('GET', `/v1/tasks/${idSegment(id)}`);
    } catch (error) {
      if (error instanceof DelayQClientError && error.code === 'TASK_NOT_FOUND') return null;
      throw error;
    }
  }

  /**
   * One page of tasks in id order (GET /v1/tasks), optionally of one topic and state: at
   * most `limit`, fewer once they pass 4 MiB; the tasks only (listPage also says where the
   * next page starts: a short page is not always the last).
   */
  async list<P = unknown>(options: ClientListOptions = {}): Promise<TaskView<P>[]> {
    return (await this.listPage<P>(options)).tasks;
  }

  /** One page of tasks in id order: pass `next` as `afterId` for the following page (null on the last). */
  async listPage<P = unknown>(options: ClientListOptions = {}): Promise<ListResponse<P>> {
    const query = new URLSearchParams();
    if (options.topic !== undefined) query.set('topic', options.topic);
    if (options.state !== undefined) query.set('state', options.state);
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.afterId !== undefined) query.set('after', options.afterId);
    const qs = query.toString();
    return this.call<ListResponse<P>>('GET', `/v1/tasks${qs ? `?${qs}` : ''}`);
  }

  /**
   * Counts, timers, lateness and push counters; the per-topic parts for one page of topics
   * by name (`topicLimit`, default 1,000, at most 10,000; `after`: pass `topicsNext`).
   */
  async stats(options: ClientStatsOptions = {}): Promise<StatsResponse> {
    const query = new URLSearchParams();
    if (options.topicLimit !== undefined) query.set('topicLimit', String(options.topicLimit));
    if (options.after !== undefined) query.set('after', options.after);
    const qs = query.toString();
    const stats = await this.call<StatsResponse>('GET', `/v1/stats${qs ? `?${qs}` : ''}`);
    for (const byName of [stats.topics, stats.ready, stats.oldestReady, stats.limits, stats.throttled, stats.push?.topics, stats.push?.origins]) withoutPrototype(byName);
    return stats;
  }

  /** Pending tasks falling due per bucket (whole minutes) between from and to: the timeline. */
  timeline(options: { from?: ClientTime; to?: ClientTime; bucketMs?: number; topic?: string } = {}): Promise<TimelineResponse> {
    const query = new URLSearchParams();
    if (options.from !== undefined) query.set('from', String(toWireTime(options.from)));
    if (options.to !== undefined) query.set('to', String(toWireTime(options.to)));
    if (options.bucketMs !== undefined) query.set('bucketMs', String(options.bucketMs));
    if (options.topic !== undefined) query.set('topic', options.topic);
    const qs = query.toString();
    return this.call<TimelineResponse>('GET', `/v1/timeline${qs ? `?${qs}` : ''}`);
  }

  /** Brings a dead task back to pending (attempts reset), due now or when given. False if it is unknown or not dead. */
  async retryDead(id: string, when: ClientWhen = {}): Promise<boolean> {
    const body = { ...when, ...(when.runAt !== undefined ? { runAt: toWireTime(when.runAt) } : {}) };
    try {
      await this.call<{ retried: true }>('POST', `/v1/tasks/${idSegment(id)}/retry`, body);
      return true;
    } catch (error) {
      if (error instanceof DelayQClientError && (error.code === 'TASK_NOT_FOUND' || error.code === 'TASK_NOT_DEAD')) return false;
      throw error;
    }
  }

  /** Gives up on up to `max` (default: the server's maxBatch) dead tasks of the topic: dead -> cancelled. */
  cancelDeadOfTopic(topic: string, options: { max?: number } = {}): Promise<CancelDeadManyResponse> {
    return this.call<CancelDeadManyResponse>('POST', `/v1/topics/${topicSegment(topic)}/dead/cancel`, options.max === undefined ? {} : { max: options.max });
  }

  /** Brings up to `max` (default: the server's maxBatch) dead tasks of the topic back to pending, due now. */
  retryDeadOfTopic(topic: string, options: { max?: number } = {}): Promise<RetryDeadManyResponse> {
    return this.call<RetryDeadManyResponse>('POST', `/v1/topics/${topicSegment(topic)}/dead/retry`, options.max === undefined ? {} : { max: options.max });
  }

  /** Operations on a whole topic, as the library's `queue.topics`. */
  readonly topics = {
    /**
     * Pauses the topic: nothing of it is delivered until it is resumed, by any server
     * sharing the store within 1 s (POST /v1/topics/:topic/pause). `changed` is false if
     * it was paused already.
     */
    pause: (topic: string): Promise<TopicPauseResponse> => this.call<TopicPauseResponse>('POST', `/v1/topics/${topicSegment(topic)}/pause`, {}),
    /** Resumes the topic: what fell due meanwhile is delivered in runAt order (POST /v1/topics/:topic/resume). */
    resume: (topic: string): Promise<TopicPauseResponse> => this.call<TopicPauseResponse>('POST', `/v1/topics/${topicSegment(topic)}/resume`, {}),
    /**
     * Sets the topic's flow limits and answers them as stored (PUT /v1/topics/:topic/limits):
     * `rate` deliveries per `periodMs` (default 1000) in bursts of at most `burst` (default
     * `rate`), and/or at most `concurrency` in flight. Every server sharing the store holds
     * them within 1 s.
     */
    setLimits: async (topic: string, limits: TopicLimitsRequest): Promise<TopicLimitsView> =>
      (await this.call<TopicLimitsResponse>('PUT', limitsPath(topic), limits)).limits,
    /** The topic's flow limits, or null when it has none (GET /v1/topics/:topic/limits). */
    getLimits: async (topic: string): Promise<TopicLimitsView | null> => {
      try {
        return (await this.call<TopicLimitsResponse>('GET', limitsPath(topic))).limits;
      } catch (error) {
        if (error instanceof DelayQClientError && error.code === 'LIMITS_NOT_FOUND') return null;
        throw error;
      }
    },
    /** Removes the topic's flow limits: true if it had some (DELETE /v1/topics/:topic/limits). */
    clearLimits: async (topic: string): Promise<boolean> => {
      try {
        await this.call<TopicLimitsDeleteResponse>('DELETE', limitsPath(topic));
        return true;
      } catch (error) {
        if (error instanceof DelayQClientError && error.code === 'LIMITS_NOT_FOUND') return false;
        throw error;
      }
    },
    /**
     * Deletes every task of the topic in `state` (`completed` also takes the cancelled
     * ones; reserved tasks are never purged) and answers how many: DELETE
     * /v1/topics/:topic/tasks. The server purges in bounded steps, so a large topic takes
     * a while: this call waits up to PURGE_EXTRA_TIMEOUT_MS longer than others.
     */
    purge: async (topic: string, options: { state: TopicPurgeState }): Promise<number> =>
      (
        await this.call<TopicPurgeResponse>('DELETE', `/v1/topics/${topicSegment(topic)}/tasks?state=${encodeURIComponent(options.state)}`, undefined, {
          extraTimeoutMs: PURGE_EXTRA_TIMEOUT_MS,
        })
      ).purged,
  };

  health(): Promise<HealthResponse> {
    return this.call<HealthResponse>('GET', '/healthz');
  }

  /**
   * Reserves up to `max` due tasks of `topic`, waiting up to `waitMs` for one to fall due.
   * Ack or nack each with its receipt before `reservedUntil`, or it is delivered again.
   */
  async reserve<P = unknown>(topic: string, options: ClientReserveOptions = {}): Promise<DeliveryView<P>[]> {
    const { signal, ...body } = options;
    try {
      const { tasks } = await this.call<ReserveResponse<P>>('POST', `/v1/topics/${topicSegment(topic)}/reserve`, body, {
        extraTimeoutMs: body.waitMs ?? 0,
        ...(signal ? { signal } : {}),
      });
      return tasks;
    } catch (error) {
      if (signal?.aborted) return [];
      throw error;
    }
  }

  /** The task is done. Throws STALE_RECEIPT (409) if the reservation is no longer current. */
  async ack(id: string, receipt: string): Promise<void> {
    await this.call<AckResponse>('POST', `/v1/tasks/${idSegment(id)}/ack`, { receipt });
  }

  /**
   * Acks several deliveries in one request (those of one reserve, say): one answer per ack,
   * `'acked'`, `'stale'` (STALE_RECEIPT for `ack`) or `'not_found'`.
   */
  async ackMany(acks: readonly { id: string; receipt: string }[]): Promise<('acked' | 'stale' | 'not_found')[]> {
    const { results } = await this.call<AckManyResponse>('POST', '/v1/tasks/ack', { acks: acks.map(({ id, receipt }) => ({ id, receipt })) });
    return results.map((r) => ('acked' in r ? 'acked' : r.error.code === 'TASK_NOT_FOUND' ? 'not_found' : 'stale'));
  }

  /**
   * More time for a reservation in force: it runs out `ttrMs` from now (default: the task's
   * ttrMs); answers the new `reservedUntil`. Throws STALE_RECEIPT (409) when the reservation
   * was settled, expired or ran out (an extension never revives one).
   */
  extend(id: string, receipt: string, options: { ttrMs?: number } = {}): Promise<ExtendResponse> {
    return this.call<ExtendResponse>('POST', `/v1/tasks/${idSegment(id)}/extend`, { receipt, ...(options.ttrMs === undefined ? {} : { ttrMs: options.ttrMs }) });
  }

  /** The attempt failed: retried after `delayMs` or the task's backoff, or dead when out of attempts. */
  nack(id: string, receipt: string, options: ClientNackOptions = {}): Promise<NackResponse> {
    return this.call<NackResponse>('POST', `/v1/tasks/${idSegment(id)}/nack`, { receipt, ...options });
  }

  /**
   * Creates or replaces `topic`'s push subscription (docs/push.md). The answer carries the
   * full `secret` only when it was given or generated: keep it, it is not shown again.
   */
  async setPush(topic: string, input: PushSubscriptionRequest): Promise<PushSubscriptionResponse> {
    const answer = await this.call<PushSubscriptionResponse>('PUT', pushPath(topic), input);
    withHeadersWithoutPrototype(answer.subscription);
    return answer;
  }

  /** The topic's push subscription (secrets masked), or null if it has none. */
  async getPush(topic: string): Promise<PushSubscriptionView | null> {
    try {
      return withHeadersWithoutPrototype((await this.call<PushSubscriptionResponse>('GET', pushPath(topic))).subscription);
    } catch (error) {
      if (error instanceof DelayQClientError && error.code === 'PUSH_NOT_FOUND') return null;
      throw error;
    }
  }

  /** Every push subscription (secrets masked), by topic: follows the pages of GET /v1/push to the last. */
  async listPush(): Promise<PushSubscriptionView[]> {
    return this.everyPage('GET /v1/push', async (after) => {
      const page = await this.listPushPage({ limit: PUSH_PER_REQUEST, ...(after !== undefined ? { after } : {}) });
      return { items: page.subscriptions, next: page.next };
    });
  }

  /** One page of the push subscriptions by topic: after `after`, at most `limit` (default 100, at most 1,000); pass `next` as `after` for the next. */
  async listPushPage(options: { after?: string; limit?: number } = {}): Promise<PushListResponse> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.after !== undefined) query.set('after', options.after);
    const qs = query.toString();
    const page = await this.call<PushListResponse>('GET', `/v1/push${qs ? `?${qs}` : ''}`);
    return { subscriptions: page.subscriptions.map(withHeadersWithoutPrototype), next: page.next };
  }

  /** Deletes the topic's push subscription: true if there was one. */
  async deletePush(topic: string): Promise<boolean> {
    try {
      await this.call<PushDeleteResponse>('DELETE', pushPath(topic));
      return true;
    } catch (error) {
      if (error instanceof DelayQClientError && error.code === 'PUSH_NOT_FOUND') return false;
      throw error;
    }
  }

  /**
   * Recurring schedules (docs/cron.md), as the library's `queue.schedules`: each occurrence
   * is a task with the id `<schedule id>:<occurrence ms>`.
   */
  readonly schedules = {
    /** Creates or changes schedule `id`; `changed: false` when the same definition was stored already. */
    upsert: async (id: string, input: RecurringRequest): Promise<{ schedule: RecurringView; changed: boolean }> => {
      const answer = await this.call<RecurringResponse>('PUT', schedulePath(id), input);
      return { schedule: answer.schedule, changed: answer.changed ?? true };
    },
    /** Creates or changes many schedules in one call (PUT /v1/schedules); one result each, in order. */
    upsertMany: async (schedules: RecurringManyRequest): Promise<RecurringManyResponse['results']> =>
      (await this.call<RecurringManyResponse>('PUT', '/v1/schedules', schedules)).results,
    /** The schedule, or null. */
    get: async (id: string): Promise<RecurringView | null> => {
      try {
        return (await this.call<RecurringResponse>('GET', schedulePath(id))).schedule;
      } catch (error) {
        if (error instanceof DelayQClientError && error.code === 'SCHEDULE_NOT_FOUND') return null;
        throw error;
      }
    },
    /** Every schedule, by id: follows the pages of GET /v1/schedules to the last. */
    list: async (): Promise<RecurringView[]> =>
      this.everyPage('GET /v1/schedules', async (after) => {
        const page = await this.schedulePage({ limit: SCHEDULES_PER_REQUEST, ...(after !== undefined ? { afterId: after } : {}) });
        return { items: page.schedules, next: page.next };
      }),
    /** One page of the schedules by id: after `afterId`, at most `limit` (default 100, at most 1,000); pass `next` as `afterId` for the next. */
    listPage: (options: ClientSchedulePageOptions = {}): Promise<RecurringListResponse> => this.schedulePage(options),
    /** Deletes the schedule (and cancels its occurrences not yet due): true if there was one. */
    remove: async (id: string): Promise<boolean> => {
      try {
        await this.call<RecurringDeleteResponse>('DELETE', schedulePath(id));
        return true;
      } catch (error) {
        if (error instanceof DelayQClientError && error.code === 'SCHEDULE_NOT_FOUND') return false;
        throw error;
      }
    },
    pause: async (id: string): Promise<RecurringView> => (await this.call<RecurringResponse>('POST', `${schedulePath(id)}/pause`)).schedule,
    resume: async (id: string): Promise<RecurringView> => (await this.call<RecurringResponse>('POST', `${schedulePath(id)}/resume`)).schedule,
    /** The next `n` occurrence times (epoch ms) at or after now. */
    next: async (id: string, n = 10): Promise<number[]> => (await this.call<RecurringNextResponse>('GET', `${schedulePath(id)}/next?n=${n}`)).times,
    /** The next `n` times (epoch ms) a rule would fire, with no schedule stored (POST /v1/schedules/preview). */
    preview: async (rule: Omit<RecurringPreviewRequest, 'n'>, n = 10): Promise<number[]> =>
      (await this.call<RecurringNextResponse>('POST', '/v1/schedules/preview', { ...rule, n })).times,
  };

  /** Every item of a paged listing: `page(after)` answers one page and the `after` of the next (null on the last). */
  private async everyPage<T>(route: string, page: (after: string | undefined) => Promise<{ items: T[]; next: string | null }>): Promise<T[]> {
    const all: T[] = [];
    let after: string | undefined;
    for (;;) {
      const { items, next } = await page(after);
      all.push(...items);
      if (next === null) return all;
      // A cursor that does not move on would loop for ever: not a delayq answer.
      if (after !== undefined && next <= after) throw new DelayQClientError('BAD_RESPONSE', `${route}: ${CLIENT_ERROR_CODES.BAD_RESPONSE} (next ${next} after ${after})`, 200);
      after = next;
    }
  }

  private schedulePage(options: ClientSchedulePageOptions): Promise<RecurringListResponse> {
    const query = new URLSearchParams();
    if (options.limit !== undefined) query.set('limit', String(options.limit));
    if (options.afterId !== undefined) query.set('after', options.afterId);
    const qs = query.toString();
    return this.call<RecurringListResponse>('GET', `/v1/schedules${qs ? `?${qs}` : ''}`);
  }

  private async falseWhenNotPending(call: Promise<unknown>): Promise<boolean> {
    try {
      await call;
      return true;
    } catch (error) {
      if (error instanceof DelayQClientError && (error.code === 'TASK_NOT_FOUND' || error.code === 'TASK_NOT_PENDING')) return false;
      throw error;
    }
  }

  private async call<T>(method: Method, path: string, body?: unknown, options: { extraTimeoutMs?: number; signal?: AbortSignal } = {}): Promise<T> {
    const timeout = this.timeoutMs + (options.extraTimeoutMs ?? 0);
    const timer = AbortSignal.timeout(timeout);
    const signal = options.signal ? AbortSignal.any([timer, options.signal]) : timer;
    let response: Response;
    let text: string;
    try {
      response = await this.fetch(`${this.base}${path}`, {
        method,
        // A POST says JSON even with no body: the server refuses one that does not (cross-site rule, docs/service.md).
        headers: body === undefined && method !== 'POST' ? this.headers : { ...this.headers, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal,
      });
      text = await response.text();
    } catch (error) {
      if (timer.aborted) throw new DelayQClientError('TIMEOUT', `${method} ${path}: no answer within ${timeout} ms`, 0, undefined, { cause: error });
      const reason = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
      throw new DelayQClientError('SERVER_UNREACHABLE', `${method} ${path}: ${this.base} unreachable (${reason})`, 0, undefined, { cause: error });
    }
    let parsed: unknown;
    try {
      parsed = text.length === 0 ? undefined : JSON.parse(text);
    } catch {
      throw badResponse(method, path, response.status, text);
    }
    if (response.ok) return parsed as T;
    if (isErrorBody(parsed)) {
      const { code, message, details } = parsed.error;
      throw new DelayQClientError(code, message, response.status, details);
    }
    throw badResponse(method, path, response.status, text);
  }
}

/**
 * An object of the answer keyed by names (topics, origins, header names) made to have no
 * prototype: `stats.ready['constructor']` is then undefined for a topic with nothing ready,
 * not Object's constructor, and a topic named `__proto__` reads like any other.
 */
function withoutPrototype(byName: object | undefined): void {
  if (typeof byName === 'object' && byName !== null && !Array.isArray(byName)) Object.setPrototypeOf(byName, null);
}

function withHeadersWithoutPrototype(subscription: PushSubscriptionView): PushSubscriptionView {
  withoutPrototype(subscription.headers);
  return subscription;
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== 'object' || value === null || !('error' in value)) return false;
  const error = value.error;
  return typeof error === 'object' && error !== null && 'code' in error && isWireErrorCode(error.code) && 'message' in error && typeof error.message === 'string';
}

function badResponse(method: Method, path: string, status: number, text: string): DelayQClientError {
  const shown = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return new DelayQClientError('BAD_RESPONSE', `${method} ${path}: ${CLIENT_ERROR_CODES.BAD_RESPONSE} (status ${status}: ${shown})`, status);
}

/**
 * A path segment. "." and ".." cannot be sent, escaped or not (URL parsing resolves them
 * away, and the request would reach another route): refused here as the server refuses them.
 */
function segment(value: string, code: 'INVALID_ID' | 'INVALID_TOPIC'): string {
  if (value === '.' || value === '..') throw new DelayQClientError(code, `${code === 'INVALID_ID' ? 'id' : 'topic'}: must not be "." or ".."`, 400);
  return encodeURIComponent(value);
}
const idSegment = (id: string): string => segment(id, 'INVALID_ID');
const topicSegment = (topic: string): string => segment(topic, 'INVALID_TOPIC');

function schedulePath(id: string): string {
  return `/v1/schedules/${idSegment(id)}`;
}

function pushPath(topic: string): string {
  return `/v1/topics/${topicSegment(topic)}/push`;
}

function limitsPath(topic: string): string {
  return `/v1/topics/${topicSegment(topic)}/limits`;
}

/** A Date as epoch ms; a string goes as it is, for the server to read strictly (one parser for every caller). */
function toWireTime(time: ClientTime): number | string {
  return time instanceof Date ? time.getTime() : time;
}

function toWireTask(input: ClientScheduleInput): ScheduleRequest {
  const { runAt, ...rest } = input;
  return runAt === undefined ? rest : { ...rest, runAt: toWireTime(runAt) };
}
