/**
 * The Pusher: push delivery's loop. It keeps one consumer per topic that has a push
 * subscription, a Worker like the ones `DelayQueue.work` starts, whose handler POSTs each
 * due task to the subscription's URL (through the PushTransport port, signed through the
 * PushSigner port) and settles it by the response (core/push.ts, judgePush): a 2xx acks,
 * anything else nacks, after the receiver's Retry-After when it sent one.
 *
 * Subscriptions live in the store, so that every process sharing it pushes: the Pusher
 * reads them all at start, every `pushSyncMs`, and at once after a change made through
 * its own queue. A subscription that changed (url, secrets, timeout, concurrency,
 * headers) gets a new consumer; the old one takes no more tasks and finishes the pushes
 * it has in flight. A deleted one's consumer is closed the same way.
 *
 * While a topic has a subscription its tasks are the Pusher's: pull consumers of that
 * topic (DelayQueue.reserve, `work` handlers) are held back by `pull`, which waits until
 * the subscription goes or the caller gives up, and aborts a reserve already waiting when
 * a subscription appears.
 *
 * Tasks scheduled with their own `url` are filed under their topic's push lane
 * (core/task/model.ts laneOf), which no pull consumer can name. A consumer here per push
 * lane pushes them to their url, signed with their topic's subscription secrets or else the
 * queue's default secret (ADR 0021); the dispatcher holds it by the topic's pause and
 * limits, like the topic's own consumers. A lane's consumer starts when a task of the lane
 * falls due in this process's wheel (`laneDue`: the process that owns the task's partition,
 * which a shared store re-promotes through after a takeover), and runs until the Pusher
 * stops: one per topic whose tasks with their own url this process has seen due.
 *
 * Every push passes a circuit breaker per destination origin (core/push-breaker.ts): while
 * an origin's circuit is open its tasks are deferred (given back uncounted, due again when
 * a probe may go) instead of sent, so a receiver that is down spends no attempts (ADR 0022).
 * Counters per topic and origin, with each circuit's state, are `stats().push`.
 *
 * Every push holds one of the process's `maxInFlight` slots while it is sent, shared fairly
 * between the consumers (engine/push/push-slots.ts, core/fair-share.ts: each topic, and each push lane
 * as one): a consumer reserves no more tasks than its share leaves it room for, so a topic
 * whose receiver hangs holds its share and no more, and the others' tasks never wait behind
 * it (ADR 0034). A push that still finds no slot waits briefly for one, then is deferred
 * like the breaker's: no attempt spent, no failure of its origin.
 *
 * A push is a reservation of timeoutMs + PUSH_RESERVATION_MARGIN_MS: if the process dies
 * mid-push, the task is delivered again once that runs out.
 */
import { activeSecrets } from '../../core/push-input.js';
import { CircuitBreakers } from '../../core/push-breaker.js';
import { breakerOutcome, classifyPush, judgePush, PUSH_DEFAULTS, PUSH_LANE_CONCURRENCY, PUSH_RESERVATION_MARGIN_MS, type PushPorts, type PushResponse, type PushResultClass, type PushSubscription } from '../../core/push.js';
import type { Clock, Logger, PushSubscriptionStore, TimerToken } from '../../core/ports/index.js';
import { redactUrl } from '../../core/redact.js';
import { pushLaneOf, type Delivery } from '../../core/task/model.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';
import { PushSlots } from './push-slots.js';
import { PushFailureLog } from './push-failure-log.js';
import { PushCounters, type PushStats } from './push-stats.js';
import type { Handler, HandlerContext } from '../workers/job.js';
import { DeferTo, RetryAfter } from '../workers/outcomes.js';
import { pushOutcome } from '../../core/task/history.js';
import { Worker, type WorkerOptions, type WorkSource } from '../workers/worker.js';
import { sendTraced } from '../tracing/tracing.js';

/**
 * The longest a push waits for a slot when its consumer's room was taken by another
 * between its reserve and its push: it still settles before its reservation runs out.
 */
export const PUSH_SLOT_WAIT_MS = PUSH_RESERVATION_MARGIN_MS / 2;

/** The Pusher's own: its ports, its consumers' source, and what tasks with their own url need. */
export interface PusherParams {
  readonly ports: PushPorts;
  /** The queue as the pushing workers see it (they reserve past the pull gate). */
  readonly source: WorkSource;
  /** Signs when the task's topic has no subscription; null: such a push fails its attempt. */
  readonly defaultSecret: string | null;
  /** The own url of a delivery reserved from a push lane. */
  readonly targetOf: (delivery: Delivery) => string | undefined;
}

interface TopicConsumer {
  readonly subscription: PushSubscription;
  /** The subscription as JSON: a consumer is replaced when this changes. */
  readonly fingerprint: string;
  readonly worker: Worker;
}

export class Pusher {
  private readonly consumers = new Map<string, TopicConsumer>();
  /** Consumers replaced or removed, finishing their pushes in flight. */
  private readonly retiring = new Set<Promise<void>>();
  /** Aborted when its topic gets a subscription: pull reserves waiting on that topic stop. */
  private readonly toPushed = new Map<string, AbortController>();
  /** Resolved when its topic loses its subscription: pull reserves held back go on. */
  private readonly toPulled = new Map<string, { readonly promise: Promise<void>; readonly resolve: () => void }>();
  /** A pull caller's signal joined with its topic's toPushed signal, kept while that one is current. */
  private readonly joined = new WeakMap<AbortSignal, { readonly pushed: AbortSignal; readonly signal: AbortSignal }>();
  private running: Promise<void> | null = null;
  private queued: Promise<void> | null = null;
  private timer: TimerToken | null = null;
  private stopped = false;
  /** The consumers of the push lanes (tasks with their own url), by lane. */
  private readonly lanes = new Map<string, Worker>();
  /** Lanes that fell due before start(): their consumers start with it. */
  private readonly earlyLanes = new Set<string>();
  private live = false;
  private readonly breakers: CircuitBreakers;
  private readonly slots: PushSlots;
  private readonly counters = new PushCounters();
  private readonly failures: PushFailureLog;
  /** Each url's origin, for the breaker: parsed once per url (a subscription pushes one url many times). */
  private readonly origins = new Map<string, string>();
  /** The first read of the subscriptions: pull reserves wait for it, so none takes a pushed topic's task at start. */
  private started: Promise<void> = Promise.resolve();
  private startedDone = false;

  private readonly store: Pick<PushSubscriptionStore, 'listPushSubscriptions'>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly inFlight: InFlight;
  private readonly syncMs: number;
  private readonly ports: PushPorts;
  private readonly source: WorkSource;
  private readonly targets: Pick<PusherParams, 'defaultSecret' | 'targetOf'>;

  constructor(context: LoopContext, { ports, source, defaultSecret, targetOf }: PusherParams) {
    ({ store: { push: this.store }, clock: this.clock, logger: this.logger, inFlight: this.inFlight } = context);
    const { tuning } = context;
    this.syncMs = tuning.pushSyncMs;
    this.ports = ports;
    this.source = source;
    this.targets = { defaultSecret, targetOf };
    this.breakers = new CircuitBreakers(tuning.pushBreaker);
    this.slots = new PushSlots(tuning.pushMaxInFlight, context.clock);
    this.failures = new PushFailureLog(this.logger, this.clock);
  }

  /** Push counters per topic and origin, with each origin's circuit, since this process started. */
  stats(): PushStats {
    return this.counters.snapshot(this.breakers, this.clock.now());
  }

  start(): void {
    this.started = this.sync().then(() => void (this.startedDone = true));
    this.live = true;
    for (const lane of this.earlyLanes) this.laneDue(lane);
    this.earlyLanes.clear();
  }

  /** Whether push lane `lane` has its consumer here (or will have it once the Pusher is live). */
  hasLane(lane: string): boolean {
    return this.lanes.has(lane) || this.earlyLanes.has(lane);
  }

  /** A task of push lane `lane` fell due in this process: the lane gets its consumer if it has none. */
  laneDue(lane: string): void {
    if (this.stopped || this.lanes.has(lane)) return;
    if (!this.live) {
      this.earlyLanes.add(lane);
      return;
    }
    const worker = new Worker(this.source, {
      topic: lane,
      handler: this.laneHandler,
      concurrency: PUSH_LANE_CONCURRENCY,
      ttrMs: PUSH_DEFAULTS.timeoutMs + PUSH_RESERVATION_MARGIN_MS,
      ...this.workerOptions(lane),
    });
    this.lanes.set(lane, worker);
  }

  /**
   * Reads the subscriptions and brings the consumers in line. Resolves once a read that
   * started after this call has been applied (a failed read is logged, and retried at the
   * next period). Never rejects.
   */
  /** Pushes to `url` are coming (a task with its own url, loaded after a start): get the transport ready. */
  warm(url: string): void {
    this.ports.transport.warm?.(url);
  }

  sync(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running === null) {
      this.running = this.readAndApply().finally(() => (this.running = null));
      return this.running;
    }
    this.queued ??= this.running.then(() => {
      this.queued = null;
      return this.sync();
    });
    return this.queued;
  }

  /**
   * A pull reserve of `topic` (`reserve` with the signal it must stop on): held back while
   * the topic has a subscription, until the subscription goes or `signal` aborts (then []).
   */
  async pull(topic: string, signal: AbortSignal, reserve: (signal: AbortSignal) => Promise<Delivery[]>): Promise<Delivery[]> {
    if (!this.startedDone) await this.started;
    for (;;) {
      const pulled = this.toPulled.get(topic);
      if (pulled !== undefined) {
        if (signal.aborted) return [];
        await untilAborted(signal, pulled.promise);
        continue;
      }
      // A reserve that does not wait (waitMs 0) cannot be overtaken by a new subscription.
      if (signal.aborted) return reserve(signal);
      const { pushed, signal: joined } = this.join(topic, signal);
      const deliveries = await reserve(joined);
      // [] with the topic pushed meanwhile: wait for it to be pulled again; else it is the answer.
      if (deliveries.length > 0 || signal.aborted || !pushed.aborted) return deliveries;
    }
  }

  /**
   * Stops syncing, closes every consumer once its pushes in flight have settled, then
   * closes the transport.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    // Pushes waiting for a slot are deferred now, not when their wait runs out.
    this.slots.close();
    for (const consumer of this.consumers.values()) this.retire(consumer);
    this.consumers.clear();
    for (const worker of this.lanes.values()) this.retire({ worker });
    this.lanes.clear();
    await this.running;
    await Promise.all([...this.retiring]);
    await this.ports.transport.close();
  }

  private async readAndApply(): Promise<void> {
    try {
      const subscriptions = await this.inFlight.track(this.store.listPushSubscriptions());
      if (!this.stopped) this.apply(subscriptions);
    } catch (error) {
      this.logger.error({ err: error }, 'push: reading the subscriptions failed; retrying at the next sync');
    } finally {
      if (!this.stopped) {
        if (this.timer !== null) this.clock.clearTimer(this.timer);
        this.timer = this.clock.setTimer(() => void this.sync(), this.syncMs);
      }
    }
  }

  private apply(subscriptions: readonly PushSubscription[]): void {
    const listed = new Set<string>();
    for (const subscription of subscriptions) {
      const { topic } = subscription;
      listed.add(topic);
      const fingerprint = JSON.stringify(subscription);
      const current = this.consumers.get(topic);
      if (current?.fingerprint === fingerprint) continue;
      if (current !== undefined) this.retire(current);
      else this.markPushed(topic);
      // Ready before its first task is due: a subscription read at start has passed no checkUrl here.
      this.ports.transport.warm?.(subscription.url);
      const handler = this.handlerFor(subscription);
      const worker = new Worker(this.source, {
        topic,
        handler,
        concurrency: subscription.concurrency,
        ttrMs: subscription.timeoutMs + PUSH_RESERVATION_MARGIN_MS,
        ...this.workerOptions(topic),
      });
      this.consumers.set(topic, { subscription, fingerprint, worker });
      this.logger.info({ topic, url: redactUrl(subscription.url), concurrency: subscription.concurrency }, current ? 'push: subscription changed' : 'push: topic subscribed');
    }
    for (const [topic, consumer] of this.consumers) {
      if (listed.has(topic)) continue;
      this.consumers.delete(topic);
      this.retire(consumer);
      this.markPulled(topic);
      this.logger.info({ topic }, 'push: topic unsubscribed');
    }
  }

  /**
   * Pushes end one by one, as their responses arrive: their acks and reserves are gathered
   * per turn. Each consumer reserves only what its share of the slots leaves room for.
   */
  private workerOptions(consumer: string): WorkerOptions {
    return { gather: true, room: { available: () => this.slots.room(consumer), wait: (signal) => this.slots.whenRoom(consumer, signal) } };
  }

  private handlerFor(subscription: PushSubscription): Handler {
    const { topic, url, timeoutMs, headers } = subscription;
    return (delivery: Delivery, { signal }: HandlerContext): Promise<void> =>
      this.push(delivery, topic, url, timeoutMs, headers, activeSecrets(subscription.secrets, this.clock.now()), signal);
  }

  /**
   * A task with its own url: signed with its topic's subscription secrets when the topic
   * has one (as this process last read them), else with the default secret; the
   * subscription's timeout and headers do not apply (PUSH_DEFAULTS.timeoutMs, no headers).
   */
  private readonly laneHandler: Handler = async (delivery: Delivery, { signal }: HandlerContext): Promise<void> => {
    const lane = pushLaneOf(delivery.topic);
    // The topic's secrets are those of the first read of the subscriptions, at the earliest.
    if (!this.startedDone) await this.started;
    const url = this.targets.targetOf(delivery);
    if (url === undefined) throw new Error('push: a task of the push lane without a url');
    const subscription = this.consumers.get(delivery.topic)?.subscription;
    const secrets = subscription ? activeSecrets(subscription.secrets, this.clock.now()) : this.targets.defaultSecret !== null ? [this.targets.defaultSecret] : [];
    if (secrets.length === 0) {
      const origin = this.originOf(url);
      const error = `push: no secret to sign with (topic ${delivery.topic} has no push subscription and the queue no default push secret)`;
      this.counters.result(delivery.topic, origin, 'unsigned');
      this.failures.failed({ origin, topic: delivery.topic, id: delivery.id, attempt: delivery.attempt, result: 'unsigned', error });
      throw new Error(error);
    }
    return this.push(delivery, lane, url, PUSH_DEFAULTS.timeoutMs, {}, secrets, signal);
  };

  /**
   * One push of `consumer` (a subscribed topic, or a push lane), holding one of its slots
   * while it is sent. `signal` is its handler's: a push whose reservation is lost (or whose
   * worker gave up at close) stops its request.
   */
  private async push(delivery: Delivery, consumer: string, url: string, timeoutMs: number, extra: Readonly<Record<string, string>>, secrets: readonly string[], signal: AbortSignal): Promise<void> {
    const { transport, signer } = this.ports;
    const now = this.clock.now();
    const origin = this.originOf(url);
    const topic = delivery.topic;
    const admission = this.breakers.admit(origin, now);
    if (!admission.admitted) {
      this.counters.deferred(topic, origin);
      throw new DeferTo(`push: circuit open for ${origin}`, admission.retryAt);
    }
    let sentAt = now;
    if (!this.slots.tryTake(consumer)) {
      if (!(await this.slots.take(consumer, PUSH_SLOT_WAIT_MS))) {
        // Not sent, so it says nothing of the origin: a probe gives its turn back.
        if (admission.probe) this.breakers.record(origin, 'neutral', this.clock.now(), true);
        this.counters.noSlot(topic, origin);
        // Due again at once, its runAt unchanged: its consumer takes it when it has room (the
        // wait above ended without a slot only because it has none now).
        throw new DeferTo(`push: no free push slot for ${consumer} (maxInFlight ${this.slots.limit}): not sent`, delivery.runAt);
      }
      sentAt = this.clock.now();
    }
    let result: PushResultClass = 'aborted';
    let failure = '';
    try {
      // The payload as stored: stores keep JSON.stringify's text, which survives a parse and a stringify unchanged.
      const body = JSON.stringify(delivery.payload) ?? 'null';
      const signed = signer.sign({ id: delivery.id, timestampSeconds: Math.floor(sentAt / 1000), body, secrets });
      const headers = {
        ...extra,
        'content-type': 'application/json',
        ...signed,
        'delayq-topic': topic,
        'delayq-attempt': String(delivery.attempt),
        'delayq-run-at': String(delivery.runAt),
      };
      this.counters.sent(topic, origin);
      const response = await sendTraced(delivery, origin, headers, (traced) => transport.send({ url, body, headers: traced, timeoutMs }, signal), pushFailure);
      result = classifyPush(response);
      const verdict = judgePush(response);
      if (!verdict.ack) {
        failure = verdict.error;
        throw new RetryAfter(verdict.error, verdict.retryAfterMs, pushOutcome(result));
      }
    } finally {
      this.slots.release(consumer);
      // Recorded whatever happened, so that a probe never stays out.
      this.breakers.record(origin, breakerOutcome(result), this.clock.now(), admission.probe);
      this.counters.result(topic, origin, result);
      if (failure !== '' && result !== 'aborted') this.failures.failed({ origin, topic, id: delivery.id, attempt: delivery.attempt, result, error: failure });
    }
  }

  private originOf(url: string): string {
    let origin = this.origins.get(url);
    if (origin === undefined) {
      origin = new URL(url).origin;
      // Bounded: per-task urls may all differ (an origin is cheap to parse again).
      if (this.origins.size >= 10_000) this.origins.clear();
      this.origins.set(url, origin);
    }
    return origin;
  }

  private retire(consumer: Pick<TopicConsumer, 'worker'>): void {
    const closed = consumer.worker.close();
    this.retiring.add(closed);
    void closed.then(() => this.retiring.delete(closed));
  }

  private markPushed(topic: string): void {
    let resolve!: () => void;
    const promise = new Promise<void>((r) => (resolve = r));
    this.toPulled.set(topic, { promise, resolve });
    const pushed = this.toPushed.get(topic);
    this.toPushed.delete(topic);
    pushed?.abort();
  }

  private markPulled(topic: string): void {
    const pulled = this.toPulled.get(topic);
    this.toPulled.delete(topic);
    pulled?.resolve();
  }

  private join(topic: string, signal: AbortSignal): { pushed: AbortSignal; signal: AbortSignal } {
    let controller = this.toPushed.get(topic);
    if (controller === undefined) this.toPushed.set(topic, (controller = new AbortController()));
    const pushed = controller.signal;
    const cached = this.joined.get(signal);
    if (cached?.pushed === pushed) return cached;
    const joined = { pushed, signal: AbortSignal.any([signal, pushed]) };
    this.joined.set(signal, joined);
    return joined;
  }
}

function untilAborted(signal: AbortSignal, promise: Promise<void>): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    void promise.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}

/** A push answer's error for its span (tracing.ts), or null for one acked. */
function pushFailure(response: PushResponse): string | null {
  const verdict = judgePush(response);
  return verdict.ack ? null : verdict.error;
}
