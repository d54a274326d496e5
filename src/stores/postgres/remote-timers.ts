/**
 * Timers this process must keep although it did not create them (SharedDispatch.onRemoteTimer):
 *
 * - near-window timers that another process scheduled (or moved) into a shard this process
 *   owns: `publish` sends them on the timers channel after the write committed, `receive`
 *   hands on those of shards owned here (a transactional schedule sends its own, on commit:
 *   the schedule function of migration 0003);
 * - the timers of a shard this process takes over (`loadShard`, retried until it works);
 * - reservations that ran out in a dead process (`recover`, after every lease tick).
 */
import { timerLine } from '../../coordination/timer-lines.js';
import type { Clock, RemoteTimerSource, TimerToken } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import { BadNotice, parseTimerNotice, type NoticeGuard } from '../../coordination/notices.js';
import { shardOf } from '../../coordination/router.js';
import type { ShardLeases } from '../../coordination/shard-leases.js';
import { packLines, type Channels } from './channels.js';
import type { PgContext } from './context.js';
import { loadDue, overdueReservations } from './inspection.js';

/** A failed load of a taken-over shard is tried again after this long. */
const LOAD_RETRY_MS = 500;
const LOAD_PAGE = 1_000;
/** Reservations overdue by this much are expired by the shard owner (the consumer's own wheel had its chance). */
const RECOVER_GRACE_MS = 2_000;
/**
 * The recovery reads the due range of tasks_due and passes over the pending tasks in it (a
 * burst's backlog): at most this often, not at every lease tick.
 */
const RECOVER_EVERY_MS = 5_000;
const RECOVER_PAGE = 500;

export class RemoteTimers {
  private readonly listeners: ((ref: TimerRef, source: RemoteTimerSource) => void)[] = [];
  private readonly retries = new Map<TimerToken, () => void>();
  private stopped = false;
  private recoveredAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly pg: PgContext,
    private readonly channels: Channels,
    private readonly leases: ShardLeases,
    private readonly clock: Clock,
    private readonly horizonMs: number,
    private readonly guard: NoticeGuard,
  ) {}

  listen(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.listeners.push(listener);
  }

  private emit(ref: TimerRef, source: RemoteTimerSource = 'store'): void {
    for (const listener of this.listeners) listener(ref, source);
  }

  /** Near-window run timers of shards other processes own go to their owners (fire and forget: a lost one waits for the owner's next load). */
  publish(refs: readonly (TimerRef | null)[], now: number): void {
    const horizon = now + this.horizonMs;
    const lines: string[] = [];
    for (const ref of refs) if (ref !== null && ref.dueAt < horizon && !this.leases.owns(shardOf(ref.id, this.pg.shards))) lines.push(timerLine(ref));
    if (lines.length === 0) return;
    const payloads = packLines(lines);
    this.pg.query(this.pg.sql('notify'), [this.channels.timers, payloads]).catch(() => undefined);
  }

  /** A notification on the timers channel (anyone who can log in may send one: notices.ts). */
  receive(payload: string): void {
    const refs = parseTimerNotice(payload);
    if (refs instanceof BadNotice) return this.guard.drop('timers', refs, payload);
    const horizon = this.clock.now() + this.horizonMs;
    for (const ref of refs) if (ref.dueAt < horizon && this.leases.owns(shardOf(ref.id, this.pg.shards))) this.emit(ref, 'notice');
  }

  /** A shard taken over: its timers within the horizon go to this process's wheel; retried until done or lost again. */
  async loadShard(shard: number): Promise<void> {
    for (;;) {
      if (this.stopped || !this.leases.owns(shard)) return;
      try {
        const until = this.clock.now() + this.horizonMs;
        let after: { dueAt: number; seq: number } | null = null;
        for (;;) {
          const page = await loadDue(this.pg, until, after, LOAD_PAGE, [shard]);
          for (const ref of page) this.emit(ref);
          const last = page.at(-1);
          if (last === undefined || page.length < LOAD_PAGE) return;
          after = { dueAt: last.dueAt, seq: last.seq };
        }
      } catch {
        await this.pause(LOAD_RETRY_MS);
      }
    }
  }

  /**
   * After a lease tick, every RECOVER_EVERY_MS: reservations of the shards held that ran out
   * RECOVER_GRACE_MS ago go to this wheel, which expires them.
   */
  async recover(owned: readonly number[]): Promise<void> {
    const now = this.clock.now();
    if (this.stopped || this.listeners.length === 0 || owned.length === 0 || now - this.recoveredAt < RECOVER_EVERY_MS) return;
    this.recoveredAt = now;
    for (const ref of await overdueReservations(this.pg, owned, now - RECOVER_GRACE_MS, RECOVER_PAGE)) this.emit(ref);
  }

  stop(): void {
    this.stopped = true;
    for (const [timer, resume] of this.retries) {
      this.clock.clearTimer(timer);
      resume();
    }
    this.retries.clear();
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
