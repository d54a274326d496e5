/**
 * Timers this process must keep although it did not create them (SharedDispatch.onRemoteTimer):
 *
 * - near-window timers that another process scheduled (or moved) into a shard this process
 *   owns, sent on the timers channel by `publish` there and handed on by `receive` here, so
 *   they fire on time rather than at the owner's next load;
 * - the timers of a shard this process takes over (`loadShard`, retried until it works);
 * - reservations that ran out in a dead process (overdue-recoverer.ts emits them here).
 */
import { parseTimerLines, timerLine } from '../shared/timer-lines.js';
import type { Clock, TimerToken } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import { loadDueScript } from './commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import type { Unparker } from './parking.js';
import { shardOf } from '../shared/router.js';
import type { ShardLeases } from '../shared/shard-leases.js';

/** A failed load of a taken-over shard is tried again after this long. */
const LOAD_RETRY_MS = 500;
/** Timers read per load-due call when loading a shard. */
const LOAD_PAGE = 1_000;

export class RemoteTimers {
  private readonly listeners: ((ref: TimerRef) => void)[] = [];
  /** Pending retries of loadShard, cut short by stop(). */
  private readonly retries = new Map<TimerToken, () => void>();
  private stopped = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly leases: ShardLeases,
    private readonly clock: Clock,
    private readonly horizonMs: number,
    private readonly unparker: Unparker,
  ) {}

  listen(listener: (ref: TimerRef) => void): void {
    this.listeners.push(listener);
  }

  get listened(): boolean {
    return this.listeners.length > 0;
  }

  emit(ref: TimerRef): void {
    for (const listener of this.listeners) listener(ref);
  }

  /** Near-window timers of shards other processes own go to their owners at once. */
  publish(refs: readonly TimerRef[], now: number): void {
    if (refs.length === 0) return;
    const horizon = now + this.horizonMs;
    const lines = refs
      .filter((r) => r.dueAt < horizon && !this.leases.owns(shardOf(r.id, this.keys.shards.length)))
      .map(timerLine);
    if (lines.length === 0) return;
    // Fire and forget: the owner's recoverer finds a timer whose message was lost once it is
    // 2 s overdue (overdue-recoverer.ts); its loader, which reads forward only, would not.
    this.client.publish(this.keys.timerChannel, lines.join('\n')).catch(() => undefined);
  }

  /** A message on the timers channel: "id topic dueAt seq" lines. */
  receive(message: string): void {
    for (const ref of parseTimerLines(message, (id) => this.leases.owns(shardOf(id, this.keys.shards.length)))) this.emit(ref);
  }

  /**
   * A shard taken over: its timers within the horizon go to this process's wheel. Retried
   * until it succeeds (or the shard is lost again): a shard owned but not loaded would
   * hold its tasks until a later owner loads it.
   */
  async loadShard(shard: number): Promise<void> {
    for (;;) {
      if (this.stopped || !this.leases.owns(shard)) return;
      try {
        await this.loadShardOnce(shard);
        return;
      } catch {
        await this.pause(LOAD_RETRY_MS);
      }
    }
  }

  /** No more loads or retries (the store is closing). */
  stop(): void {
    this.stopped = true;
    for (const [timer, resume] of this.retries) {
      this.clock.clearTimer(timer);
      resume();
    }
    this.retries.clear();
  }

  private async loadShardOnce(shard: number): Promise<void> {
    const until = this.clock.now() + this.horizonMs;
    await this.unparker.prepare(shard, until);
    let after: { dueAt: number; seq: number } | null = null;
    for (;;) {
      const page = await loadDueScript(this.client, this.keys.shards[shard]!, until, after, LOAD_PAGE);
      for (const entry of page) this.emit({ ...entry });
      const last = page[page.length - 1];
      if (!last || page.length < LOAD_PAGE) return;
      after = { dueAt: last.dueAt, seq: last.seq };
    }
  }

  private pause(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(() => {
        this.retries.delete(timer);
        resolve();
      }, ms);
      this.retries.set(timer, resolve);
    });
  }
}
