/**
 * Topic flow limits as this process applies them (issue 36, ADR 0043): the limits, synced
 * from the store like the paused topics (VersionedSync, every pauseSyncMs), and the
 * admissions the dispatchers ask for before each reserve of a limited topic.
 *
 * An admission (TopicLimitStore.admitFlow) takes tokens and slots in the store, where every
 * process sharing it takes them too, so a limit holds across processes. The reserve then
 * asks for no more than was granted and waits at most HOLD_MS for it; `bind` gives back
 * what it did not use and turns the admission's slots into one per delivery, held until its
 * reservation ends. A delivery settled through this process (ack, nack, defer) frees its
 * slot at once (`settled`, gathered per turn into one releaseFlow per topic); one settled
 * nowhere frees it when its reservation runs out. A task held back stays pending and due in
 * the ready lists, in runAt order: it is neither failed nor charged an attempt.
 *
 *   rate 100/s burst 10, one consumer asking for 64
 *     t = 0:   admit 64 -> 10 granted; reserve 10; bind (nothing unused)
 *     t = 1:   admit 64 -> 0, next token at t = 10 -> throttled + 1; wait until t = 10
 *     t = 10:  admit 64 -> 1 granted ...
 *
 * Topics without limits pay one object lookup per reserve (`limitsOf`).
 */
import { asDict, dict, dictOf, type Dict } from '../../core/dict.js';
import { randomBytes } from 'node:crypto';
import type { FlowLease, LimitedTopics, TopicLimits } from '../../core/ports/index.js';
import type { LoopContext } from '../loop-context.js';
import { VersionedSync } from './versioned-sync.js';

/** How long an admission's reserve may wait for a task before its tokens and slots go back. */
const FLOW_HOLD_MS = 1_000;
/** How long past HOLD_MS an admission's slots stay held should its bind never come (a crash). */
const HOLD_GRACE_MS = 5_000;
/** How soon a refused admission asks again: at the next token, but not sooner than this (a few tokens a call, not one). */
const MIN_WAIT_MS = 10;
/** How soon a refusal for want of a slot asks again, unless a settlement here frees one first. */
const SLOT_POLL_MS = 50;

const HOLDER_PREFIX = randomBytes(6).toString('base64url');
let holders = 0;

/** An admission: `granted` deliveries of `topic` may be reserved now. */
export interface FlowTicket {
  readonly topic: string;
  readonly limits: TopicLimits;
  readonly holder: string;
  readonly granted: number;
}

export class FlowControl {
  private limits: Readonly<Dict<TopicLimits>> = dict();
  private readonly sync: VersionedSync<LimitedTopics>;
  private readonly throttledCounts = new Map<string, number>();
  /** Admissions waiting for a token or a slot, woken early by a settlement here or a change of limits. */
  private readonly waiters = new Map<string, Set<() => void>>();
  private readonly releases = new Map<string, string[]>();
  private releaseQueued = false;
  private readonly holds = new Map<string, FlowLease[]>();
  private holdQueued = false;
  private running = false;
  private readonly context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight' | 'observer'>;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight' | 'observer' | 'tuning'>) {
    this.context = context;
    const { store } = context;
    this.sync = new VersionedSync(context, { read: () => store.topics.topicLimits(), apply: (read) => this.take(read.limits), what: 'topic limits' });
  }

  limitsOf(topic: string): TopicLimits | undefined {
    return this.limits[topic];
  }

  /** Every limited topic's limits, in topic order. */
  list(): Readonly<Record<string, TopicLimits>> {
    return this.limits;
  }

  /** How many times an admission of each topic was refused (and its reserve waited), since this process started. */
  throttled(): Record<string, number> {
    return dictOf(this.throttledCounts);
  }

  start(): void {
    this.running = true;
    this.sync.start();
  }

  stop(): void {
    this.running = false;
    this.sync.stop();
    this.wakeAll();
  }

  /** Takes the store's limits as they are now (a change through this process). */
  apply(read: LimitedTopics): void {
    this.sync.apply(read);
  }

  refresh(): Promise<void> {
    return this.sync.refresh();
  }

  /** When the last read that succeeded was sent (delivery-gate.ts). */
  confirmedAt(): number {
    return this.sync.confirmedAt;
  }

  /**
   * Waits until at least one delivery of `topic` may go, and answers how many (at most
   * `want`). Null when `signal` aborted, the flow stopped, or `topic` is no longer limited.
   */
  async admit(topic: string, want: number, signal: AbortSignal): Promise<FlowTicket | null> {
    const { store, clock, inFlight } = this.context;
    for (;;) {
      const limits = this.limits[topic];
      // Asked at least once: a reserve that does not wait (an aborted signal) still gets what is free now.
      if (!this.running || limits === undefined) return null;
      const now = clock.now();
      const holder = `${HOLDER_PREFIX}${(holders++).toString(36)}`;
      const admission = await inFlight.track(store.topics.admitFlow({ topic, limits, want, holder, holdUntil: now + FLOW_HOLD_MS + HOLD_GRACE_MS, now }));
      if (admission.granted > 0) return { topic, limits, holder, granted: admission.granted };
      this.throttledCounts.set(topic, (this.throttledCounts.get(topic) ?? 0) + 1);
      this.context.observer.throttled?.(topic);
      if (signal.aborted) return null;
      const waitMs = admission.retryAt > 0 ? Math.max(MIN_WAIT_MS, admission.retryAt - now) : SLOT_POLL_MS;
      await this.wait(topic, waitMs, signal);
    }
  }

  /** A signal that aborts with `signal` or when the admission's hold is over: the reserve's wait. */
  holdSignal(signal: AbortSignal): { readonly signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    const onAbort = (): void => controller.abort();
    if (signal.aborted) controller.abort();
    else signal.addEventListener('abort', onAbort, { once: true });
    const timer = this.context.clock.setTimer(onAbort, FLOW_HOLD_MS);
    return {
      signal: controller.signal,
      release: () => {
        signal.removeEventListener('abort', onAbort);
        this.context.clock.clearTimer(timer);
      },
    };
  }

  /**
   * Ends an admission with what was reserved under it: the tokens not used go back, and each
   * delivery holds a slot until its reservation ends. A failure is logged: the tokens stay
   * spent, and the admission's slots run out within HOLD_GRACE_MS.
   */
  async bind(ticket: FlowTicket, reserved: readonly { readonly id: string; readonly receipt: string | null; readonly reservedUntil: number | null }[]): Promise<void> {
    const { store, clock, inFlight, logger } = this.context;
    const unused = Math.max(0, ticket.granted - reserved.length);
    const now = clock.now();
    const leases = ticket.limits.concurrency === null ? [] : reserved.map((task) => ({ key: task.receipt ?? task.id, until: task.reservedUntil ?? now }));
    try {
      await inFlight.track(store.topics.bindFlow({ topic: ticket.topic, limits: ticket.limits, holder: ticket.holder, unused, leases, now }));
    } catch (error) {
      logger.warn({ err: error, topic: ticket.topic }, 'flow: giving back an admission failed; its slots run out by themselves');
    }
  }

  /** A delivery of `topic` (its receipt) was settled through this process: its slot is freed (gathered per turn). */
  settled(topic: string, receipt: string): void {
    if (this.limits[topic]?.concurrency == null) return;
    let receipts = this.releases.get(topic);
    if (receipts === undefined) this.releases.set(topic, (receipts = []));
    receipts.push(receipt);
    if (this.releaseQueued) return;
    this.releaseQueued = true;
    queueMicrotask(() => this.flushReleases());
  }

  /**
   * A delivery of `topic` was renewed to `until` (renewer.ts): its slot, when the topic has a
   * concurrency, is held to the new end (gathered per turn into one holdFlow per topic), or
   * it would run out while the delivery is still in flight.
   */
  renewed(topic: string, receipt: string, until: number): void {
    if (this.limits[topic]?.concurrency == null) return;
    let leases = this.holds.get(topic);
    if (leases === undefined) this.holds.set(topic, (leases = []));
    leases.push({ key: receipt, until });
    if (this.holdQueued) return;
    this.holdQueued = true;
    queueMicrotask(() => this.flushHolds());
  }

  private flushHolds(): void {
    this.holdQueued = false;
    const { store, inFlight, logger, clock } = this.context;
    for (const [topic, leases] of this.holds) {
      void inFlight
        .track(store.topics.holdFlow(topic, leases, clock.now()))
        .catch((error: unknown) => logger.warn({ err: error, topic }, 'flow: holding the slots of renewed deliveries failed; they run out at their first end'));
    }
    this.holds.clear();
  }

  private flushReleases(): void {
    this.releaseQueued = false;
    const { store, inFlight, logger } = this.context;
    for (const [topic, ids] of this.releases) {
      void inFlight
        .track(store.topics.releaseFlow(topic, ids))
        .then(() => this.wake(topic))
        .catch((error: unknown) => logger.warn({ err: error, topic }, 'flow: freeing slots failed; they run out with their reservations'));
    }
    this.releases.clear();
  }

  private take(limits: Readonly<Record<string, TopicLimits>>): void {
    // A copy without a prototype, whatever the store built: `limitsOf('constructor')` is no function.
    this.limits = asDict(limits);
    // Changed limits may let a waiting admission through, or end its topic's limits.
    this.wakeAll();
  }

  private wait(topic: string, ms: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted || !this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let set = this.waiters.get(topic);
      if (set === undefined) this.waiters.set(topic, (set = new Set()));
      const waiters = set;
      const done = (): void => {
        this.context.clock.clearTimer(timer);
        signal.removeEventListener('abort', done);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiters.get(topic) === waiters) this.waiters.delete(topic);
        resolve();
      };
      const timer = this.context.clock.setTimer(done, ms);
      signal.addEventListener('abort', done, { once: true });
      waiters.add(done);
    });
  }

  private wake(topic: string): void {
    for (const done of [...(this.waiters.get(topic) ?? [])]) done();
  }

  private wakeAll(): void {
    for (const topic of [...this.waiters.keys()]) this.wake(topic);
  }
}
