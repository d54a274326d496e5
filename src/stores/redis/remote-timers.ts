/**
 * Timers this process must keep although it did not create them (SharedDispatch.onRemoteTimer):
 *
 * - near-window timers that another process scheduled (or moved) into a shard this process
 *   owns, sent on the timers channel by `publish` there and handed on by `receive` here, so
 *   they fire on time rather than at the owner's next load;
 * - the timers of a shard this process takes over (`loadShard`, retried until it works);
 * - reservations that ran out in a dead process (overdue-recoverer.ts emits them here).
 */
import { timerLine } from '../../coordination/timer-lines.js';
import type { Clock, RemoteTimerSource, TimerToken } from '../../core/ports/index.js';
import { BadNotice, parseTimerNotice, type NoticeGuard } from '../../coordination/notices.js';
import type { TimerRef } from '../../core/task/model.js';
import { loadDueScript } from './commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import type { Unparker } from './parking.js';
import { shardOf } from '../../coordination/router.js';
import type { ShardLeases } from '../../coordination/shard-leases.js';

/** A failed load of a taken-over shard is tried again after this long. */
const LOAD_RETRY_MS = 500;
/** Timer lines per published message. */
const PUBLISH_LINES = 1_000;
/** Timers read per load-due call when loading a shard. */
const LOAD_PAGE = 1_000;

export class RemoteTimers {
  private readonly listeners: ((ref: TimerRef, source: RemoteTimerSource) => void)[] = [];
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
    private readonly guard: NoticeGuard,
  ) {}

  listen(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.listeners.push(listener);
  }

  get listened(): boolean {
    return this.listeners.length > 0;
  }

  /** A timer read from the store (a shard's load, the recoverer's overdue reservations). */
  emit(ref: TimerRef, source: RemoteTimerSource = 'store'): void {
    for (const listener of this.listeners) listener(ref, source);
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
    // Messages of at most PUBLISH_LINES lines, well within what a receiver takes (MAX_NOTICE_LINES).
    for (let at = 0; at < lines.length; at += PUBLISH_LINES) this.client.publish(this.keys.timerChannel, lines.slice(at, at + PUBLISH_LINES).join('\n')).catch(() => undefined);
  }

  /** A message on the timers channel: "id lane dueAt seq" lines (any client of the Redis may send one: notices.ts). */
  receive(message: string): void {
    const refs = parseTimerNotice(message);
    if (refs instanceof BadNotice) return this.guard.drop('timers', refs, message);
    const horizon = this.clock.now() + this.horizonMs;
    for (const ref of refs) if (ref.dueAt < horizon && this.leases.owns(shardOf(ref.id, this.keys.shards.length))) this.emit(ref, 'notice');
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
