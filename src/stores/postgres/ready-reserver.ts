/**
 * Consumers of every process reserving due tasks of a lane (SharedDispatch.reserveReady).
 * There are no ready lists to move tasks into: a pending task whose runAt has passed is
 * ready, and a reservation is one statement that takes the oldest due ones of the lane with
 * `FOR UPDATE SKIP LOCKED` and reserves them:
 *
 *   process A reserves ---+--> rows 1..64 locked and reserved by A's statement
 *   process B reserves ---+--> skips 1..64 (locked), takes 65..128
 *
 * so each ready task is reserved by one consumer, once per attempt, and never before its
 * runAt (the statement checks it). A call that finds nothing waits (ReadyWaiters, one
 * "shard": the lane) until a promotion anywhere says the lane has due tasks (the ready
 * channel, or this process's own promote directly), or the sweep (every SWEEP_MS while it
 * waits: the safety net for a notification lost in a reconnect), or its signal aborts.
 *
 * Through a burst each statement would walk the index entries of every task reserved before
 * it (the old versions' entries stay until vacuum), so a lane keeps a cursor: the (due
 * time, seq) of the last task its full answer took, and the next statement starts after
 * it. A short answer (the range after the cursor ran dry) drops the cursor, so the next
 * one starts from the beginning again: a task made due behind the cursor meanwhile (a
 * retry, a task scheduled in the past) waits for that, never longer than the burst.
 */
import type { ReserveRow } from './task-writes.js';
import { isPushLane, topicOfLane, type ReservedTask } from '../../core/task/model.js';
import { nextNonce } from '../shared/nonce.js';
import type { ReadyWaiters } from '../shared/ready-waiters.js';
import type { PgContext } from './context.js';
import { countersCte } from './counters.js';
import { maxAttemptsOf, reservation } from './rows.js';

/** The most tasks one statement reserves. */
const MAX_RESERVE = 1_000;

export class ReadyReserver {
  private stopped = false;
  /** Per lane: where the next statement starts (see the header). */
  private readonly cursors = new Map<string, { dueAt: number; seq: number }>();

  constructor(
    private readonly pg: PgContext,
    private readonly waiters: ReadyWaiters,
  ) {}

  async reserveReady(lane: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<ReservedTask[]> {
    const want = Math.min(max, MAX_RESERVE);
    for (;;) {
      if (this.stopped) return [];
      if (this.waiters.candidates(lane).length > 0) {
        const epoch = this.waiters.epoch(lane);
        const reserved = await this.reserveDue(lane, want, now(), ttrMs);
        // A full answer may have left more; a short one emptied the lane (unless a notice raced it).
        this.waiters.update(lane, 0, reserved.length === want ? 1 : 0, epoch);
        if (reserved.length > 0) return reserved;
      }
      if (signal.aborted || this.stopped) return [];
      if (this.waiters.candidates(lane).length > 0) continue;
      await this.waiters.wait(lane, signal);
    }
  }

  /** Tasks of `lane` became due (a promotion here or a notice from another process). */
  notify(lane: string): void {
    this.waiters.notify(lane, 0);
  }

  /** Every lane may have due tasks (the listener reconnected: notices may have been lost). */
  flagAll(): void {
    this.waiters.flagAll();
  }

  stop(): void {
    this.stopped = true;
    this.waiters.close();
  }

  private async reserveDue(lane: string, max: number, now: number, ttrMs: number | undefined): Promise<ReservedTask[]> {
    const s = this.pg.schema;
    const cursor = this.cursors.get(lane);
    const rows = await this.pg.query<ReserveRow & { picked_due: number; picked_seq: number }>(
      `WITH picked AS (
         SELECT id, due_at, seq FROM "${s}".reserve_pick($1, $9, $2, $3, $7::bigint, $8::bigint)
       ),
       upd AS (
         UPDATE "${s}".tasks t SET ${reservation('t.', '$2', '$4', '$5')}
           FROM picked p WHERE t.id = p.id AND t.state = 'pending' AND t.run_at <= $2
         RETURNING t.id, t.topic, t.payload, t.run_at, t.attempts, ${maxAttemptsOf('t.')} AS max_attempts, t.receipt, t.reserved_until, t.url, t.seq, p.due_at AS picked_due
       ),
       ${countersCte(s, "SELECT topic, 'pending'::text AS from_state, 'reserved'::text AS to_state FROM upd", '$6')}
       SELECT id, topic, payload, run_at, attempts, max_attempts, receipt, reserved_until, url, picked_due, seq AS picked_seq FROM upd ORDER BY picked_due, seq`,
      [topicOfLane(lane), now, max, nextNonce(), ttrMs ?? null, this.pg.slotOf('reserve'), cursor?.dueAt ?? -1, cursor?.seq ?? -1, isPushLane(lane)],
      'delayq_reserve_due',
    );
    const last = rows.at(-1);
    if (rows.length < max || last === undefined) this.cursors.delete(lane);
    else this.cursors.set(lane, { dueAt: last.picked_due, seq: last.picked_seq });
    return rows.map((r) =>
      r.url === null
        ? { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until }
        : { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until, url: r.url },
    );
  }
}
