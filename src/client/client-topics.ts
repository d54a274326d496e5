/** `client.topics`: operations on a whole topic, as the library's `queue.topics`. */
import type { TopicLimitsDeleteResponse, TopicLimitsRequest, TopicLimitsResponse, TopicLimitsView, TopicPauseResponse, TopicPurgeResponse, TopicPurgeState } from '../wire/types.js';
import { doneUnless, topicSegment, unless, type JsonHttp } from './http.js';

/** How much longer than other calls `topics.purge` waits for its answer (10 minutes). */
export const PURGE_EXTRA_TIMEOUT_MS = 600_000;

const topicPath = (topic: string, rest: string): string => `/v1/topics/${topicSegment(topic)}/${rest}`;

// Arrow properties, as the object literal they replace: `const { pause } = client.topics` keeps working.
export class ClientTopics {
  constructor(private readonly http: JsonHttp) {}

  /**
   * Pauses the topic: nothing of it is delivered until it is resumed, by any server
   * sharing the store within 1 s (POST /v1/topics/:topic/pause). `changed` is false if
   * it was paused already.
   */
  readonly pause = (topic: string): Promise<TopicPauseResponse> => this.http.call<TopicPauseResponse>('POST', topicPath(topic, 'pause'), {});

  /** Resumes the topic: what fell due meanwhile is delivered in runAt order (POST /v1/topics/:topic/resume). */
  readonly resume = (topic: string): Promise<TopicPauseResponse> => this.http.call<TopicPauseResponse>('POST', topicPath(topic, 'resume'), {});

  /**
   * Sets the topic's flow limits and answers them as stored (PUT /v1/topics/:topic/limits):
   * `rate` deliveries per `periodMs` (default 1000) in bursts of at most `burst` (default
   * `rate`), and/or at most `concurrency` in flight. Every server sharing the store holds
   * them within 1 s.
   */
  readonly setLimits = async (topic: string, limits: TopicLimitsRequest): Promise<TopicLimitsView> =>
    (await this.http.call<TopicLimitsResponse>('PUT', topicPath(topic, 'limits'), limits)).limits;

  /** The topic's flow limits, or null when it has none (GET /v1/topics/:topic/limits). */
  readonly getLimits = async (topic: string): Promise<TopicLimitsView | null> =>
    (await unless(this.http.call<TopicLimitsResponse>('GET', topicPath(topic, 'limits')), ['LIMITS_NOT_FOUND'], null))?.limits ?? null;

  /** Removes the topic's flow limits: true if it had some (DELETE /v1/topics/:topic/limits). */
  readonly clearLimits = (topic: string): Promise<boolean> => doneUnless(this.http.call<TopicLimitsDeleteResponse>('DELETE', topicPath(topic, 'limits')), ['LIMITS_NOT_FOUND']);

  /**
   * Deletes every task of the topic in `state` (`completed` also takes the cancelled
   * ones; reserved tasks are never purged) and answers how many: DELETE
   * /v1/topics/:topic/tasks. The server purges in bounded steps, so a large topic takes
   * a while: this call waits up to PURGE_EXTRA_TIMEOUT_MS longer than others.
   */
  readonly purge = async (topic: string, options: { state: TopicPurgeState }): Promise<number> =>
    (await this.http.call<TopicPurgeResponse>('DELETE', topicPath(topic, `tasks?state=${encodeURIComponent(options.state)}`), undefined, { extraTimeoutMs: PURGE_EXTRA_TIMEOUT_MS })).purged;
}
