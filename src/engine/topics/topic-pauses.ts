/**
 * The paused topics as this process holds them (issue 36, ADR 0040): a Set the dispatchers
 * look a topic up in before each reserve, kept in step with the store's set.
 *
 * The store keeps the set and a version (TopicPauseStore). A pause or resume through this
 * process applies here at once (`apply`, after the store took it); one through another
 * process sharing the store is read within `pauseSyncMs` (default 1 s): every tick reads
 * the store's set (one small read: a Redis MULTI of a GET and an HKEYS) and applies it when
 * its version moved. A topic that becomes paused cuts the reserves waiting on it
 * (`cutOnPause`, for a store whose reserves wait in the store), and every reserve then waits
 * in `whenResumed`, which resolves when the topic is resumed or the reserve's signal aborts.
 *
 *   pauseSyncMs 1000; process B pauses "mail" at t = 300
 *     A, t = 1000: reads version 7 (was 6): mail paused -> A's waiting reserves of mail are
 *                  cut and hold in whenResumed; nothing of mail is reserved from then on
 *     B resumes at t = 4200; A, t = 5000: reads version 8 -> A's holders of mail reserve
 *
 * An unpaused topic costs a reserve one Set lookup (`has`). A failed read is logged and the
 * set in force stays until a read succeeds.
 */
import type { PausedTopics } from '../../core/ports/index.js';
import type { LoopContext } from '../loop-context.js';
import { VersionedSync } from './versioned-sync.js';

/** What the dispatchers need: is the topic held, and a wait for it to be let go. */
export interface TopicGate {
  has(topic: string): boolean;
  /** Resolves once `topic` is not paused, or `signal` aborts, or the gate stops. */
  whenResumed(topic: string, signal: AbortSignal): Promise<void>;
  /** A signal that aborts with `signal`, or when `topic` is paused; `release` once the wait ended. */
  cutOnPause(topic: string, signal: AbortSignal): { readonly signal: AbortSignal; release(): void };
}

export class TopicPauses implements TopicGate {
  private paused = new Set<string>();
  private readonly resumeWaiters = new Map<string, Set<() => void>>();
  private readonly cuts = new Map<string, Set<AbortController>>();
  private running = false;
  private readonly sync: VersionedSync<PausedTopics>;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight' | 'tuning'>) {
    const { store } = context;
    this.sync = new VersionedSync(context, { read: () => store.topics.pausedTopics(), apply: (read) => this.take(read.topics), what: 'paused topics' });
  }

  has(topic: string): boolean {
    return this.paused.has(topic);
  }

  /** The paused topics, in ascending order. */
  list(): string[] {
    return [...this.paused].sort();
  }

  start(): void {
    this.running = true;
    this.sync.start();
  }

  stop(): void {
    this.running = false;
    this.sync.stop();
    // Every holder goes: a stopped dispatcher answers [].
    for (const waiters of this.resumeWaiters.values()) for (const wake of waiters) wake();
    this.resumeWaiters.clear();
  }

  /** Takes the store's set as it is now (a pause or resume through this process, the read at open). */
  apply(read: PausedTopics): void {
    this.sync.apply(read);
  }

  /** Reads the store's set now and applies it if its version moved. */
  refresh(): Promise<void> {
    return this.sync.refresh();
  }

  /** When the last read that succeeded was sent (delivery-gate.ts). */
  confirmedAt(): number {
    return this.sync.confirmedAt;
  }

  private take(topics: readonly string[]): void {
    const next = new Set(topics);
    for (const topic of next) if (!this.paused.has(topic)) this.cut(topic);
    const resumed = [...this.paused].filter((topic) => !next.has(topic));
    this.paused = next;
    for (const topic of resumed) {
      const waiters = this.resumeWaiters.get(topic);
      if (waiters === undefined) continue;
      this.resumeWaiters.delete(topic);
      for (const wake of waiters) wake();
    }
  }

  whenResumed(topic: string, signal: AbortSignal): Promise<void> {
    if (!this.paused.has(topic) || signal.aborted || !this.running) return Promise.resolve();
    return new Promise<void>((resolve) => {
      let waiters = this.resumeWaiters.get(topic);
      if (waiters === undefined) this.resumeWaiters.set(topic, (waiters = new Set()));
      const set = waiters;
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        set.delete(wake);
        resolve();
      };
      const onAbort = (): void => wake();
      set.add(wake);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  cutOnPause(topic: string, signal: AbortSignal): { readonly signal: AbortSignal; release(): void } {
    const controller = new AbortController();
    if (signal.aborted) controller.abort();
    const onAbort = (): void => controller.abort();
    signal.addEventListener('abort', onAbort, { once: true });
    let set = this.cuts.get(topic);
    if (set === undefined) this.cuts.set(topic, (set = new Set()));
    set.add(controller);
    const cuts = set;
    return {
      signal: controller.signal,
      release: () => {
        signal.removeEventListener('abort', onAbort);
        cuts.delete(controller);
        if (cuts.size === 0 && this.cuts.get(topic) === cuts) this.cuts.delete(topic);
      },
    };
  }

  private cut(topic: string): void {
    const set = this.cuts.get(topic);
    if (set === undefined) return;
    this.cuts.delete(topic);
    for (const controller of set) controller.abort();
  }

}
