/**
 * Timers this process must keep although it did not create them (SharedDispatch.onRemoteTimer),
 * written once for every shared store; the store's backend only sends lines and reads pages:
 *
 * - near-window timers that another process scheduled (or moved) into a shard this process
 *   owns: `publish` sends them on the timers channel after the write committed, `receive`
 *   hands on those of shards owned here, so they fire on time rather than at the owner's
 *   next load (a PostgreSQL transactional schedule sends its own, on commit);
 * - the timers of a shard this process takes over (`loadShard`, retried until it works);
 * - timers the store's recovery reads (reservations that ran out in a dead process, a timer
 *   whose message was lost): the backend's recoverer hands them to `emit`.
 *
 * Publishing is fire and forget: a lost message waits for the owner's recovery or next load.
 */
import type { Clock, DueCursor, RemoteTimerSource, TimerToken } from '../core/ports/index.js';
import type { TimerRef } from '../core/task/model.js';
import { BadNotice, parseTimerNotice, type NoticeGuard } from './notices.js';
import { shardOf } from './router.js';
import type { ShardLeases } from './shard-leases.js';
import { timerLine } from './timer-lines.js';

/** A failed load of a taken-over shard is tried again after this long. */
export const LOAD_RETRY_MS = 500;
/** Timers read per page when loading a shard. */
const LOAD_PAGE = 1_000;

/** One page of a shard's timers, due before `until`, after `after` in (dueAt, seq) order. */
export interface DuePageRequest {
  readonly shard: number;
  readonly until: number;
  readonly after: DueCursor | null;
  readonly limit: number;
}

/** What a shared store gives the remote timers. */
export interface RemoteTimerBackend {
  /** How many shards task ids fall into. */
  readonly shards: number;
  /** Sends timer lines ("id lane dueAt seq", timer-lines.ts) to every process on the timers channel; fire and forget, never throws. */
  publish(lines: readonly string[]): void;
  /** Reads one page of a shard's timers: `limit` of them, fewer only when no more are due before `until`. */
  loadDuePage(request: DuePageRequest): Promise<readonly TimerRef[]>;
  /** Before a shard's timers are read up to `until` (Redis moves its parked tasks due by then back into the shard). */
  prepareShard?(shard: number, until: number): Promise<void>;
}

/** A load of a shard under way: the position of the last timer it handed on, where a retry goes on. */
interface ShardLoad {
  readonly shard: number;
  after: DueCursor | null;
}

export interface RemoteTimerParts {
  readonly backend: RemoteTimerBackend;
  readonly leases: ShardLeases;
  readonly clock: Clock;
  /** Timers further ahead than this are not sent or kept: the owner's loads reach them. */
  readonly horizonMs: number;
  /** Where a timers message no process of ours sent is dropped and counted (notices.ts). */
  readonly guard: NoticeGuard;
}

export class RemoteTimers {
  private readonly listeners: ((ref: TimerRef, source: RemoteTimerSource) => void)[] = [];
  /** Pending retries of loadShard, cut short by stop(). */
  private readonly retries = new Map<TimerToken, () => void>();
  private stopped = false;
  private readonly parts: RemoteTimerParts;

  constructor(parts: RemoteTimerParts) {
    this.parts = parts;
  }

  listen(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.listeners.push(listener);
  }

  /** Someone listens: a recovery with no one to hand its timers to reads nothing. */
  get listened(): boolean {
    return this.listeners.length > 0;
  }

  /** A timer read from the store (a shard's load, the recovery's overdue timers). */
  emit(ref: TimerRef, source: RemoteTimerSource = 'store'): void {
    for (const listener of this.listeners) listener(ref, source);
  }

  /** Near-window timers of shards other processes own go to their owners at once. */
  publish(refs: readonly (TimerRef | null)[], now: number): void {
    const { backend, leases, horizonMs } = this.parts;
    const horizon = now + horizonMs;
    const lines: string[] = [];
    for (const ref of refs) if (ref !== null && ref.dueAt < horizon && !leases.owns(shardOf(ref.id, backend.shards))) lines.push(timerLine(ref));
    if (lines.length > 0) backend.publish(lines);
  }

  /** A message on the timers channel (anyone who can reach the store may send one: notices.ts). */
  receive(message: string): void {
    // The subscriber may hand on a message after the store stopped its timers.
    if (this.stopped) return;
    const { backend, leases, horizonMs, clock, guard } = this.parts;
    const refs = parseTimerNotice(message);
    if (refs instanceof BadNotice) return guard.drop('timers', refs, message);
    const horizon = clock.now() + horizonMs;
    for (const ref of refs) if (ref.dueAt < horizon && leases.owns(shardOf(ref.id, backend.shards))) this.emit(ref, 'notice');
  }

  /**
   * A shard taken over: its timers within the horizon go to this process's wheel. Retried
   * until it succeeds (or the shard is lost again): a shard owned but not loaded would hold
   * its tasks until a later owner loads it. A retry goes on after the last timer handed on
   * (the pages before it are not handed on twice), up to the horizon of its own time.
   */
  async loadShard(shard: number): Promise<void> {
    const load: ShardLoad = { shard, after: null };
    for (;;) {
      if (!this.loading(shard)) return;
      try {
        await this.loadShardOnce(load);
        return;
      } catch {
        // A read that fails once stop() was called arms no retry: nothing would cancel it.
        if (!this.loading(shard)) return;
        await this.pause(LOAD_RETRY_MS);
      }
    }
  }

  /** No more loads or retries (the store is closing). */
  stop(): void {
    this.stopped = true;
    for (const [timer, resume] of this.retries) {
      this.parts.clock.clearTimer(timer);
      resume();
    }
    this.retries.clear();
  }

  /** Whether a load of `shard` goes on: not after stop(), nor once the shard is lost. */
  private loading(shard: number): boolean {
    return !this.stopped && this.parts.leases.owns(shard);
  }

  private async loadShardOnce(load: ShardLoad): Promise<void> {
    const { backend, clock, horizonMs } = this.parts;
    const { shard } = load;
    const until = clock.now() + horizonMs;
    await backend.prepareShard?.(shard, until);
    for (;;) {
      const page = await backend.loadDuePage({ shard, until, after: load.after, limit: LOAD_PAGE });
      // A page read once stop() was called (the store is closing) or the shard was lost is not handed on.
      if (!this.loading(shard)) return;
      for (const ref of page) this.emit(ref);
      const last = page.at(-1);
      if (last === undefined || page.length < LOAD_PAGE) return;
      load.after = { dueAt: last.dueAt, seq: last.seq };
    }
  }

  private pause(ms: number): Promise<void> {
    const { clock } = this.parts;
    return new Promise((resolve) => {
      const timer = clock.setTimer(() => {
        this.retries.delete(timer);
        resolve();
      }, ms);
      this.retries.set(timer, resolve);
    });
  }
}
