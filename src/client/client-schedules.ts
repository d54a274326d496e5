/**
 * `client.schedules`: recurring schedules (docs/cron.md), as the library's
 * `queue.schedules`: each occurrence is a task with the id `<schedule id>:<occurrence ms>`.
 */
import type {
  RecurringDeleteResponse,
  RecurringListResponse,
  RecurringManyRequest,
  RecurringManyResponse,
  RecurringNextResponse,
  RecurringPreviewRequest,
  RecurringRequest,
  RecurringResponse,
  RecurringView,
} from '../wire/types.js';
import { doneUnless, everyPage, idSegment, unless, withQuery, type JsonHttp } from './http.js';

export interface ClientSchedulePageOptions {
  limit?: number;
  afterId?: string;
}

/** The server's largest page of schedules (MAX_SCHEDULE_PAGE): `schedules.list` follows pages of this size. */
const SCHEDULES_PER_REQUEST = 1_000;

const schedulePath = (id: string): string => `/v1/schedules/${idSegment(id)}`;

// Arrow properties, as the object literal they replace: `const { upsert } = client.schedules` keeps working.
export class ClientSchedules {
  constructor(private readonly http: JsonHttp) {}

  /** Creates or changes schedule `id`; `changed: false` when the same definition was stored already. */
  readonly upsert = async (id: string, input: RecurringRequest): Promise<{ schedule: RecurringView; changed: boolean }> => {
    const answer = await this.http.call<RecurringResponse>('PUT', schedulePath(id), input);
    return { schedule: answer.schedule, changed: answer.changed ?? true };
  };

  /** Creates or changes many schedules in one call (PUT /v1/schedules); one result each, in order. */
  readonly upsertMany = async (schedules: RecurringManyRequest): Promise<RecurringManyResponse['results']> =>
    (await this.http.call<RecurringManyResponse>('PUT', '/v1/schedules', schedules)).results;

  /** The schedule, or null. */
  readonly get = async (id: string): Promise<RecurringView | null> =>
    (await unless(this.http.call<RecurringResponse>('GET', schedulePath(id)), ['SCHEDULE_NOT_FOUND'], null))?.schedule ?? null;

  /** Every schedule, by id: follows the pages of GET /v1/schedules to the last. */
  readonly list = (): Promise<RecurringView[]> =>
    everyPage('GET /v1/schedules', async (after) => {
      const page = await this.listPage({ limit: SCHEDULES_PER_REQUEST, ...(after !== undefined ? { afterId: after } : {}) });
      return { items: page.schedules, next: page.next };
    });

  /** One page of the schedules by id: after `afterId`, at most `limit` (default 100, at most 1,000); pass `next` as `afterId` for the next. */
  readonly listPage = (options: ClientSchedulePageOptions = {}): Promise<RecurringListResponse> =>
    this.http.call<RecurringListResponse>('GET', withQuery('/v1/schedules', { limit: options.limit, after: options.afterId }));

  /** Deletes the schedule (and cancels its occurrences not yet due): true if there was one. */
  readonly remove = (id: string): Promise<boolean> => doneUnless(this.http.call<RecurringDeleteResponse>('DELETE', schedulePath(id)), ['SCHEDULE_NOT_FOUND']);

  readonly pause = async (id: string): Promise<RecurringView> => (await this.http.call<RecurringResponse>('POST', `${schedulePath(id)}/pause`)).schedule;

  readonly resume = async (id: string): Promise<RecurringView> => (await this.http.call<RecurringResponse>('POST', `${schedulePath(id)}/resume`)).schedule;

  /** The next `n` occurrence times (epoch ms) at or after now. */
  readonly next = async (id: string, n = 10): Promise<number[]> => (await this.http.call<RecurringNextResponse>('GET', `${schedulePath(id)}/next?n=${n}`)).times;

  /** The next `n` times (epoch ms) a rule would fire, with no schedule stored (POST /v1/schedules/preview). */
  readonly preview = async (rule: Omit<RecurringPreviewRequest, 'n'>, n = 10): Promise<number[]> =>
    (await this.http.call<RecurringNextResponse>('POST', '/v1/schedules/preview', { ...rule, n })).times;
}
