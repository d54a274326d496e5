/**
 * Prometheus metrics of a queue (docs/metrics.md), with prom-client, on a registry the
 * caller owns. Three sources:
 *
 * - the engine's observer port (core/observer.ts): counters of tasks scheduled, delivered,
 *   acked, failed, dead and cancelled by topic, the delivery lateness histogram by topic, and
 *   the deliveries a topic's flow limits held back (delayq_topic_throttled_total), and the
 *   lifecycle events lost, by reason (delayq_events_dropped_total);
 * - wrappers around the store and the push transport: store operation durations by
 *   operation, push requests by topic and status class and their durations;
 * - gauges read at scrape time (collect, gauges.ts) from what the queue already keeps counted
 *   (`stats()`: the store's per-(topic, state) counters, the wheel's size, the ready
 *   queue's backlog; the schedules by state from the engine's copy of the list): a scrape
 *   costs O(topics + schedules), never O(tasks), and reads no schedule from the store.
 *
 * Topic labels are capped (`maxTopics`, default 100): the first topics seen get their own
 * label, every later one is counted under topic="_other", so a producer that invents a
 * topic per task cannot blow up the scrape or Prometheus.
 */
import { ENGINE_OPTIONS } from '../core/option-table/index.js';
import { dict } from '../core/dict.js';
import type { EventDropReason } from '../core/events.js';
import { performance } from 'node:perf_hooks';
import { Counter, Histogram, collectDefaultMetrics, type Registry } from 'prom-client';
import { UNKNOWN_TOPIC, type QueueObserver, type SettleOutcome } from '../core/observer.js';
import { COORDINATION_OPERATIONS, STORE_ROLE_OPERATIONS, type SharedDispatch, type StoreRole, type TaskStore } from '../core/ports/index.js';
import type { PushRequest, PushResponse, PushTransport } from '../core/push.js';
import { QueueGauges, type StatsSource } from './gauges.js';

/** prom-client's default gauges whose names end in _total, left out of the default metrics. */
export const MISNAMED_DEFAULT_GAUGES: readonly string[] = ['nodejs_active_handles_total', 'nodejs_active_requests_total', 'nodejs_active_resources_total'];

/** The topic label of every topic past the cap. */
export const OTHER_TOPIC = '_other';
export const DEFAULT_MAX_TOPICS: number = ENGINE_OPTIONS['metrics.maxTopics'].default;
/** Topics whose last failed push is kept (GET /v1/activity pushFailures): those that failed last. */
export const MAX_PUSH_FAILURE_TOPICS = 10_000;

/** Lateness buckets in seconds: 1 ms .. 60 s. */
export const LATENESS_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const STORE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
const PUSH_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * Store methods timed: every method of the port's role objects (`store.tasks`,
 * `store.schedules`...: src/core/ports/ lists them, and the compiler keeps those lists
 * complete), and the coordination part's promote. close, the long-poll reserveReady and the
 * listener onRemoteTimer pass through untimed. A method's label is its name, whichever role
 * object has it.
 */
const STORE_ROLES = Object.keys(STORE_ROLE_OPERATIONS) as StoreRole[];
export const TIMED_STORE_OPERATIONS: readonly string[] = Object.values(STORE_ROLE_OPERATIONS).flat();
export { RECURRING_STATES, type StatsSource } from './gauges.js';
export const TIMED_COORDINATION_OPERATIONS: readonly string[] = COORDINATION_OPERATIONS.filter((operation) => operation === 'promote');

export interface MetricsOptions {
  /** Where the metrics are registered (a prom-client Registry). */
  readonly registry: Registry;
  /** Topics with a label of their own; the rest are counted under topic="_other". Default 100. */
  readonly maxTopics?: number;
  /** Also collect prom-client's default process metrics on the registry. Default false (the server: true). */
  readonly defaultMetrics?: boolean;
}

/** The last failed push of a topic (for the dashboard's topics page). */
export interface PushFailure {
  readonly at: number;
  readonly error: string;
}

type Child = { inc(value?: number): void };

type CounterName = 'scheduled' | 'delivered' | SettleOutcome;
const COUNTER_NAMES: readonly CounterName[] = ['scheduled', 'delivered', 'acked', 'failed', 'dead', 'cancelled'];

/** The counters' totals and the lateness histogram, as plain numbers (the dashboard's feed: GET /v1/activity). */
export interface Activity {
  /** Totals since the process started. */
  readonly totals: Readonly<Record<CounterName, number>>;
  /** The same, by topic label (capped like the metrics). */
  readonly topics: Readonly<Record<string, Readonly<Record<CounterName, number>>>>;
  /** Lateness: counts[i] deliveries at most le[i] seconds late, cumulative; one more count at the end: every delivery (+Inf). */
  readonly lateness: { readonly le: readonly number[]; readonly counts: readonly number[] };
}

export class QueueMetrics implements QueueObserver {
  readonly registry: Registry;
  private readonly maxTopics: number;
  private readonly topics = new Set<string>();
  private readonly counters: Record<CounterName, Counter<'topic'>>;
  private readonly children = new Map<string, Child>();
  /** The counters again, as plain numbers by topic label: what activity() answers without asking prom-client. */
  private readonly tallies = new Map<string, Record<CounterName, number>>();
  /** Deliveries per lateness bucket (not cumulative); the last is beyond 60 s. */
  private readonly latenessTally = new Array<number>(LATENESS_BUCKETS.length + 1).fill(0);
  private readonly lateness: Histogram<'topic'>;
  /** The histogram's child of each topic label, looked up once (deliveries are the hot path). */
  private readonly latenessChildren = new Map<string, { observe(value: number): void }>();
  private readonly storeDurations: Histogram<'operation'>;
  private readonly throttledCounter: Counter<'topic'>;
  /** The throttled counter's child of each topic label, looked up once (refusals come in runs). */
  private readonly throttledChildren = new Map<string, { inc(): void }>();
  private readonly pushRequests: Counter<'topic' | 'status_class'>;
  private readonly eventsDroppedCounter: Counter<'reason'>;
  private readonly pushDurations: Histogram<'topic'>;
  private readonly pushFailures = new Map<string, PushFailure>();
  private gauges: QueueGauges | null = null;
  /** The coordination part of the store these metrics time (wrapStore), whose dropped notices they count. */
  private coordination: SharedDispatch | null = null;

  constructor(options: MetricsOptions) {
    const registers = [options.registry];
    this.registry = options.registry;
    this.maxTopics = options.maxTopics ?? DEFAULT_MAX_TOPICS;
    if (!Number.isSafeInteger(this.maxTopics) || this.maxTopics < 0) throw new RangeError(`metrics.maxTopics: expected an integer >= 0 (got ${this.maxTopics})`);
    const counter = (what: string, help: string): Counter<'topic'> =>
      new Counter({ name: `delayq_tasks_${what}_total`, help, labelNames: ['topic'], registers });
    this.counters = {
      scheduled: counter('scheduled', 'Tasks created (an existing id is not counted).'),
      delivered: counter('delivered', 'Deliveries: tasks handed to a handler, a reserve or a push.'),
      acked: counter('acked', 'Deliveries acked (tasks completed).'),
      failed: counter('failed', 'Deliveries that failed and went back to pending for a retry (nack or reservation ran out).'),
      dead: counter('dead', 'Deliveries that failed on their last attempt: the task is dead.'),
      cancelled: counter('cancelled', 'Pending tasks cancelled.'),
    };
    this.lateness = new Histogram({
      name: 'delayq_delivery_lateness_seconds',
      help: 'How late deliveries were, by topic: handler start, reserve answer or push send minus the task runAt.',
      labelNames: ['topic'],
      buckets: LATENESS_BUCKETS,
      registers,
    });
    this.throttledCounter = new Counter({
      name: 'delayq_topic_throttled_total',
      help: "Deliveries that waited for the topic's flow limits (admissions refused), by topic.",
      labelNames: ['topic'],
      registers,
    });
    this.eventsDroppedCounter = new Counter({
      name: 'delayq_events_dropped_total',
      help: 'Lifecycle events lost, by reason: overflow (the buffer to the store was full), store (writing them failed), invalid (an entry read back from the store was not an event).',
      labelNames: ['reason'],
      registers,
    });
    this.storeDurations = new Histogram({
      name: 'delayq_store_operation_duration_seconds',
      help: 'Duration of store operations, by operation.',
      labelNames: ['operation'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.pushRequests = new Counter({
      name: 'delayq_push_requests_total',
      help: 'Push requests sent, by topic and status class (2xx, 3xx, 4xx, 5xx, or failure: no response).',
      labelNames: ['topic', 'status_class'],
      registers,
    });
    this.pushDurations = new Histogram({
      name: 'delayq_push_request_duration_seconds',
      help: 'Duration of push requests, by topic.',
      labelNames: ['topic'],
      buckets: PUSH_BUCKETS,
      registers,
    });
    const badNotices = (): Iterable<[string, number]> => this.coordination?.badNotices?.() ?? [];
    new Counter({
      name: 'delayq_bad_notices_total',
      help: 'Messages from other processes (PostgreSQL NOTIFY, Redis PUBLISH) dropped as malformed, by channel: another client of the store sent them.',
      labelNames: ['channel'],
      registers,
      collect() {
        this.reset();
        for (const [channel, n] of badNotices()) this.inc({ channel }, n);
      },
    });
    if (options.defaultMetrics === true) {
      collectDefaultMetrics({ register: options.registry });
      // prom-client has no option to leave a default metric out: these three are gauges named
      // like counters (`promtool check metrics` rejects a non-counter ending in _total), and
      // each repeats the sum of its by-type gauge (nodejs_active_handles{type}, ...), kept.
      for (const name of MISNAMED_DEFAULT_GAUGES) options.registry.removeSingleMetric(name);
    }
  }

  /**
   * Registers the gauges read at scrape time (gauges.ts) over `source`, the queue these
   * metrics observe: its constructor calls this, so they read it from the start. Once.
   */
  registerGauges(source: StatsSource): void {
    if (this.gauges !== null) throw new Error('metrics: the gauges are registered already; a QueueMetrics observes one queue');
    this.gauges = new QueueGauges(this.registry, source, this);
  }

  // QueueObserver

  scheduled(topic: string, count: number): void {
    this.child('scheduled', topic).inc(count);
  }

  delivered(topic: string, latenessMs: number): void {
    this.child('delivered', topic).inc();
    const seconds = Math.max(0, latenessMs) / 1000;
    const label = this.topicLabel(topic);
    let lateness = this.latenessChildren.get(label);
    if (lateness === undefined) this.latenessChildren.set(label, (lateness = this.lateness.labels(label)));
    lateness.observe(seconds);
    let i = 0;
    while (i < LATENESS_BUCKETS.length && seconds > LATENESS_BUCKETS[i]!) i++;
    this.latenessTally[i]!++;
  }

  /** The counters and the lateness histogram now: O(topics). */
  activity(): Activity {
    const totals = zeroTally();
    const topics = dict<Record<CounterName, number>>();
    for (const [topic, tally] of this.tallies) {
      topics[topic] = { ...tally };
      for (const name of COUNTER_NAMES) totals[name] += tally[name];
    }
    const counts: number[] = [];
    let sum = 0;
    for (const n of this.latenessTally) counts.push((sum += n));
    return { totals, topics, lateness: { le: LATENESS_BUCKETS, counts } };
  }

  settled(topic: string, outcome: SettleOutcome): void {
    this.child(outcome, topic).inc();
  }

  eventsDropped(reason: EventDropReason, count: number): void {
    this.eventsDroppedCounter.inc({ reason }, count);
  }

  throttled(topic: string): void {
    const label = this.topicLabel(topic);
    let child = this.throttledChildren.get(label);
    if (child === undefined) this.throttledChildren.set(label, (child = this.throttledCounter.labels(label)));
    child.inc();
  }

  /** The label a topic is counted under: its own while under the cap, else "_other". */
  topicLabel(topic: string): string {
    if (topic === UNKNOWN_TOPIC || this.topics.has(topic)) return topic;
    if (this.topics.size >= this.maxTopics) return OTHER_TOPIC;
    this.topics.add(topic);
    return topic;
  }

  /** The last failed push of each topic since the process started (of the MAX_PUSH_FAILURE_TOPICS that failed last). */
  lastPushFailures(): ReadonlyMap<string, PushFailure> {
    return this.pushFailures;
  }

  /** Keeps `topic`'s last failure, most recent last: past MAX_PUSH_FAILURE_TOPICS topics, the one that failed longest ago goes. */
  private notePushFailure(topic: string, failure: PushFailure): void {
    this.pushFailures.delete(topic);
    this.pushFailures.set(topic, failure);
    if (this.pushFailures.size > MAX_PUSH_FAILURE_TOPICS) this.pushFailures.delete(this.pushFailures.keys().next().value!);
  }

  /**
   * The store with the operations of its role objects (`store.tasks`, `store.schedules`...)
   * timed. Calls go to the role object itself (a method runs with it as `this`); the store's
   * other members (`tasks.runTimers`, `transactional`...) pass through.
   */
  wrapStore<S extends TaskStore>(store: S): S {
    this.coordination = store.coordination;
    const timed = new Map<PropertyKey, unknown>();
    for (const role of STORE_ROLES) timed.set(role, this.timedProxy(store[role], this.timedMethods(store[role], STORE_ROLE_OPERATIONS[role])));
    // The coordination part is reached through the store: its promotions are timed too.
    if (store.coordination !== null) timed.set('coordination', this.timedProxy(store.coordination, this.timedMethods(store.coordination, TIMED_COORDINATION_OPERATIONS)));
    return this.timedProxy(store, timed);
  }

  private timedMethods(target: object, operations: readonly string[]): Map<PropertyKey, unknown> {
    const timed = new Map<PropertyKey, unknown>();
    const durations = this.storeDurations;
    for (const operation of operations) {
      const method: unknown = Reflect.get(target, operation);
      if (typeof method !== 'function') continue;
      const observe = durations.labels(operation);
      timed.set(operation, (...args: unknown[]): unknown => {
        const started = performance.now();
        const result = (method as (...a: unknown[]) => unknown).apply(target, args);
        if (result instanceof Promise) {
          const done = (): void => observe.observe((performance.now() - started) / 1000);
          result.then(done, done);
        }
        return result;
      });
    }
    return timed;
  }

  private timedProxy<T extends object>(store: T, timed: Map<PropertyKey, unknown>): T {
    return new Proxy(store, {
      get(target, property) {
        const wrapped = timed.get(property);
        if (wrapped !== undefined) return wrapped;
        const value: unknown = Reflect.get(target, property, target);
        if (typeof value !== 'function') return value;
        // Bound once, not on every read: untimed methods can be on the engine's hot path too.
        const bound = (value as (...a: unknown[]) => unknown).bind(target);
        timed.set(property, bound);
        return bound;
      },
    });
  }

  /** The push transport with each request counted and timed (the topic comes from the delayq-topic header). */
  wrapTransport(transport: PushTransport, now: () => number = Date.now): PushTransport {
    return {
      checkUrl: (url) => transport.checkUrl(url),
      close: () => transport.close(),
      send: async (request: PushRequest, signal?: AbortSignal): Promise<PushResponse> => {
        const started = performance.now();
        const response = await transport.send(request, signal);
        const topic = request.headers['delayq-topic'] ?? UNKNOWN_TOPIC;
        const label = this.topicLabel(topic);
        const statusClass = response.kind === 'failure' ? 'failure' : `${Math.floor(response.status / 100)}xx`;
        this.pushRequests.labels(label, statusClass).inc();
        this.pushDurations.labels(label).observe((performance.now() - started) / 1000);
        if (response.kind === 'failure') this.notePushFailure(topic, { at: now(), error: response.reason });
        else if (response.status < 200 || response.status >= 300) this.notePushFailure(topic, { at: now(), error: `HTTP ${response.status}` });
        return response;
      },
    };
  }

  private child(counter: CounterName, topic: string): Child {
    const label = this.topicLabel(topic);
    const key = `${counter}\u0000${label}`;
    let child = this.children.get(key);
    if (child === undefined) {
      const prom = this.counters[counter].labels(label);
      let tally = this.tallies.get(label);
      if (tally === undefined) this.tallies.set(label, (tally = zeroTally()));
      const counts = tally;
      child = {
        inc: (value = 1) => {
          prom.inc(value);
          counts[counter] += value;
        },
      };
      this.children.set(key, child);
    }
    return child;
  }
}

function zeroTally(): Record<CounterName, number> {
  return { scheduled: 0, delivered: 0, acked: 0, failed: 0, dead: 0, cancelled: 0 };
}
