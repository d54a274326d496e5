/**
 * The delayq HTTP client (`delayq/client`): the library's method names over the HTTP API,
 * on fetch (keep-alive by default in Node). It imports only src/client and src/wire, so a
 * service using it loads nothing of the server or the stores.
 */
import { streamEvents, type ClientEventsOptions } from './client-events.js';
import type { TaskEventView } from '../wire/event-types.js';
import type {
  AckManyResponse,
  AckResponse,
  BatchItemResult,
  BatchResponse,
  CancelDeadManyResponse,
  CancelManyResponse,
  CancelResponse,
  DeliveryView,
  ExtendResponse,
  HealthResponse,
  ListResponse,
  NackResponse,
  PushDeleteResponse,
  PushListResponse,
  PushSubscriptionRequest,
  PushSubscriptionResponse,
  PushSubscriptionView,
  RescheduleResponse,
  ReserveResponse,
  RetryDeadManyResponse,
  ScheduleRequest,
  ScheduleResponse,
  StatsResponse,
  TaskState,
  TaskView,
  TimelineResponse,
} from '../wire/types.js';
import { ClientSchedules } from './client-schedules.js';
import { ClientTopics } from './client-topics.js';
import { doneUnless, everyPage, idSegment, JsonHttp, topicSegment, unless, withoutPrototype, withQuery } from './http.js';

export { PURGE_EXTRA_TIMEOUT_MS } from './client-topics.js';
export type { ClientSchedulePageOptions } from './client-schedules.js';

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

/** The server's largest page of push subscriptions (MAX_PUSH_PAGE): `listPush` follows pages of this size. */
const PUSH_PER_REQUEST = 1_000;
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

export class DelayQClient {
  private readonly http: JsonHttp;
  /** Operations on a whole topic, as the library's `queue.topics`: pause, resume, flow limits, purge (client-topics.ts). */
  readonly topics: ClientTopics;
  /** Recurring schedules (docs/cron.md), as the library's `queue.schedules` (client-schedules.ts). */
  readonly schedules: ClientSchedules;

  constructor(options: DelayQClientOptions = {}) {
    this.http = new JsonHttp({
      base: (options.url ?? DEFAULT_SERVER_URL).replace(/\/+$/, ''),
      headers: options.token ? { authorization: `Bearer ${options.token}` } : {},
      timeoutMs: options.timeoutMs ?? 30_000,
      fetch: options.fetch ?? globalThis.fetch,
    });
    this.topics = new ClientTopics(this.http);
    this.schedules = new ClientSchedules(this.http);
  }

  /**
   * The server's lifecycle events (GET /v1/events, Server-Sent Events) as an async iterable:
   * from now on, or after `after`; of one `topic` and some `types` if given. A dropped
   * stream is opened again after the last event read. Needs a server started with --events.
   */
  events(options: ClientEventsOptions = {}): AsyncGenerator<TaskEventView, void, undefined> {
    return streamEvents(this.http.options, options);
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
    return doneUnless(this.call<CancelResponse>('DELETE', `/v1/tasks/${idSegment(id)}`), NOT_PENDING);
  }

  /** Cancels several tasks in one request: one answer per id, as `cancel` would give. */
  async cancelMany(ids: readonly string[]): Promise<boolean[]> {
    const { results } = await this.call<CancelManyResponse>('POST', '/v1/tasks/cancel', { ids });
    return results.map((r) => r.cancelled);
  }

  /** Moves a pending task to a new time. True if it was pending; false if unknown or no longer pending. */
  async reschedule(id: string, when: ClientWhen): Promise<boolean> {
    const body = { ...when, ...(when.runAt !== undefined ? { runAt: toWireTime(when.runAt) } : {}) };
    return doneUnless(this.call<RescheduleResponse>('PATCH', `/v1/tasks/${idSegment(id)}`, body), NOT_PENDING);
  }

  /** The task, or null if there is none with this id. */
  get<P = unknown>(id: string): Promise<TaskView<P> | null> {
    return unless(this.call<TaskView<P>>('GET', `/v1/tasks/${idSegment(id)}`), ['TASK_NOT_FOUND'], null);
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
  listPage<P = unknown>(options: ClientListOptions = {}): Promise<ListResponse<P>> {
    return this.call<ListResponse<P>>('GET', withQuery('/v1/tasks', { topic: options.topic, state: options.state, limit: options.limit, after: options.afterId }));
  }

  /**
   * Counts, timers, lateness and push counters; the per-topic parts for one page of topics
   * by name (`topicLimit`, default 1,000, at most 10,000; `after`: pass `topicsNext`).
   */
  async stats(options: ClientStatsOptions = {}): Promise<StatsResponse> {
    const stats = await this.call<StatsResponse>('GET', withQuery('/v1/stats', { topicLimit: options.topicLimit, after: options.after }));
    for (const byName of [stats.topics, stats.ready, stats.oldestReady, stats.limits, stats.throttled, stats.push?.topics, stats.push?.origins]) withoutPrototype(byName);
    return stats;
  }

  /** Pending tasks falling due per bucket (whole minutes) between from and to: the timeline. */
  timeline(options: { from?: ClientTime; to?: ClientTime; bucketMs?: number; topic?: string } = {}): Promise<TimelineResponse> {
    const { from, to, bucketMs, topic } = options;
    return this.call<TimelineResponse>('GET', withQuery('/v1/timeline', { from: from === undefined ? undefined : toWireTime(from), to: to === undefined ? undefined : toWireTime(to), bucketMs, topic }));
  }

  /** Brings a dead task back to pending (attempts reset), due now or when given. False if it is unknown or not dead. */
  retryDead(id: string, when: ClientWhen = {}): Promise<boolean> {
    const body = { ...when, ...(when.runAt !== undefined ? { runAt: toWireTime(when.runAt) } : {}) };
    return doneUnless(this.call<{ retried: true }>('POST', `/v1/tasks/${idSegment(id)}/retry`, body), ['TASK_NOT_FOUND', 'TASK_NOT_DEAD']);
  }

  /** Gives up on up to `max` (default: the server's maxBatch) dead tasks of the topic: dead -> cancelled. */
  cancelDeadOfTopic(topic: string, options: { max?: number } = {}): Promise<CancelDeadManyResponse> {
    return this.call<CancelDeadManyResponse>('POST', `/v1/topics/${topicSegment(topic)}/dead/cancel`, options.max === undefined ? {} : { max: options.max });
  }

  /** Brings up to `max` (default: the server's maxBatch) dead tasks of the topic back to pending, due now. */
  retryDeadOfTopic(topic: string, options: { max?: number } = {}): Promise<RetryDeadManyResponse> {
    return this.call<RetryDeadManyResponse>('POST', `/v1/topics/${topicSegment(topic)}/dead/retry`, options.max === undefined ? {} : { max: options.max });
  }

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
    const answer = await unless(this.call<PushSubscriptionResponse>('GET', pushPath(topic)), ['PUSH_NOT_FOUND'], null);
    return answer === null ? null : withHeadersWithoutPrototype(answer.subscription);
  }

  /** Every push subscription (secrets masked), by topic: follows the pages of GET /v1/push to the last. */
  async listPush(): Promise<PushSubscriptionView[]> {
    return everyPage('GET /v1/push', async (after) => {
      const page = await this.listPushPage({ limit: PUSH_PER_REQUEST, ...(after !== undefined ? { after } : {}) });
      return { items: page.subscriptions, next: page.next };
    });
  }

  /** One page of the push subscriptions by topic: after `after`, at most `limit` (default 100, at most 1,000); pass `next` as `after` for the next. */
  async listPushPage(options: { after?: string; limit?: number } = {}): Promise<PushListResponse> {
    const page = await this.call<PushListResponse>('GET', withQuery('/v1/push', { limit: options.limit, after: options.after }));
    return { subscriptions: page.subscriptions.map(withHeadersWithoutPrototype), next: page.next };
  }

  /** Deletes the topic's push subscription: true if there was one. */
  deletePush(topic: string): Promise<boolean> {
    return doneUnless(this.call<PushDeleteResponse>('DELETE', pushPath(topic)), ['PUSH_NOT_FOUND']);
  }

  private call<T>(...args: Parameters<JsonHttp['call']>): Promise<T> {
    return this.http.call<T>(...args);
  }
}

const NOT_PENDING = ['TASK_NOT_FOUND', 'TASK_NOT_PENDING'] as const;

function pushPath(topic: string): string {
  return `/v1/topics/${topicSegment(topic)}/push`;
}

function withHeadersWithoutPrototype(subscription: PushSubscriptionView): PushSubscriptionView {
  withoutPrototype(subscription.headers);
  return subscription;
}

/** A Date as epoch ms; a string goes as it is, for the server to read strictly (one parser for every caller). */
function toWireTime(time: ClientTime): number | string {
  return time instanceof Date ? time.getTime() : time;
}

function toWireTask(input: ClientScheduleInput): ScheduleRequest {
  const { runAt, ...rest } = input;
  return runAt === undefined ? rest : { ...rest, runAt: toWireTime(runAt) };
}
