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
 * `tasks_due` holds every lane's due tasks in one (due time, seq) order, so a statement
 * that started from the beginning would walk past the index entries of every due task of
 * other lanes (a paused topic's backlog, a topic nobody consumes: 300,000 of them made
 * another topic's deliveries 130 ms late) and, through a burst, of every task reserved
 * before it (old versions' entries stay until vacuum). So a lane keeps a cursor: the
 * position after which its next statement starts, moved to the last task each statement
 * took. A task can become due behind the cursor (scheduled in the past, retried, its
 * reservation expired): its owner's wheel promotes it, and the ready notice carries the
 * earliest position it promoted per lane, which moves the cursor back before it, in this
 * process and in every other. A notice that carries no position, and a listener that
 * reconnected (notices may have been lost), clear the cursor; and a lane starts from the
 * beginning at least every FULL_WALK_MS whatever the notices said, the safety net for a
 * task skipped while another process held it locked in a statement that then failed.
 */
import { reservedOf, type ReserveRow } from './task-writes.js';
import { isPushLane, topicOfLane, type ReservedTask } from '../../core/task/model.js';
import { nextNonce } from '../shared/nonce.js';
import type { ReadyWaiters } from '../../coordination/ready-waiters.js';
import type { PgContext } from './context.js';

/** The most tasks one statement reserves. */
const MAX_RESERVE = 1_000;
/** A lane's statements start from the beginning at least this often (see the header). */
export const FULL_WALK_MS = 2_000;

/** A place in `tasks_due`'s order. */
export interface DuePosition {
  readonly dueAt: number;
  readonly seq: number;
}

function before(a: DuePosition, b: DuePosition): boolean {
  return a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);
}

/** Keeps, per lane, the earliest position given for it. */
export function keepEarliest(earliest: Map<string, DuePosition>, lane: string, position: DuePosition): void {
  const known = earliest.get(lane);
  if (known === undefined || before(position, known)) earliest.set(lane, position);
}

/** The earlier of two positions; null is the beginning. */
function earlier(a: DuePosition | null, b: DuePosition | null): DuePosition | null {
  return a === null || b === null ? null : before(a, b) ? a : b;
}

/** A statement in flight: the earliest place a notice pointed to meanwhile (undefined: none came). */
interface Flight {
  low: DuePosition | null | undefined;
}

/** A lane's cursor and the statements in flight on it (see the header). */
interface LaneWalk {
  /** Where the next statement starts: after this position, or at the beginning (null). */
  cursor: DuePosition | null;
  /** When a statement last started from the beginning. */
  walkedAt: number;
  readonly flights: Set<Flight>;
}

export class ReadyReserver {
  private stopped = false;
  private readonly walks = new Map<string, LaneWalk>();

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

  /**
   * Tasks of `lane` became due (a promotion here or a notice from another process), the
   * earliest of them at `from` (undefined: not said, so from the beginning).
   */
  notify(lane: string, from?: DuePosition): void {
    const walk = this.walks.get(lane);
    if (walk !== undefined) {
      // Just before `from`: statements take positions strictly after the cursor.
      const back = from === undefined ? null : { dueAt: from.dueAt, seq: from.seq - 1 };
      walk.cursor = earlier(walk.cursor, back);
      for (const flight of walk.flights) flight.low = flight.low === undefined ? back : earlier(flight.low, back);
    }
    this.waiters.notify(lane, 0);
  }

  /** Every lane may have due tasks anywhere (the listener reconnected: notices may have been lost). */
  flagAll(): void {
    for (const lane of this.walks.keys()) this.notify(lane);
    this.waiters.flagAll();
  }

  stop(): void {
    this.stopped = true;
    this.waiters.close();
  }

  private async reserveDue(lane: string, max: number, now: number, ttrMs: number | undefined): Promise<ReservedTask[]> {
    let walk = this.walks.get(lane);
    if (walk === undefined) {
      walk = { cursor: null, walkedAt: now, flights: new Set() };
      this.walks.set(lane, walk);
    }
    if (now - walk.walkedAt >= FULL_WALK_MS) walk.cursor = null;
    const cursor = walk.cursor;
    if (cursor === null) walk.walkedAt = now;
    const flight: Flight = { low: undefined };
    walk.flights.add(flight);
    try {
      const rows = await this.statement(lane, max, now, ttrMs, cursor);
      const last = rows.at(-1);
      // Past the last task taken; where it started if it took none (nothing after that was due
      // and free), unless a notice pointed earlier meanwhile.
      const reached = last === undefined ? cursor : { dueAt: last.picked_due, seq: last.picked_seq };
      walk.cursor = flight.low === undefined ? reached : earlier(reached, flight.low);
      return rows.map(reservedOf);
    } finally {
      walk.flights.delete(flight);
    }
  }

  private statement(lane: string, max: number, now: number, ttrMs: number | undefined, cursor: DuePosition | null): Promise<(ReserveRow & { picked_due: number; picked_seq: number })[]> {
    return this.pg.query<ReserveRow & { picked_due: number; picked_seq: number }>(
      this.pg.sql('reserve-due'),
      [topicOfLane(lane), now, nextNonce(), ttrMs ?? null, this.pg.slotOf('reserve'), max, cursor?.dueAt ?? -1, cursor?.seq ?? -1, isPushLane(lane)],
    );
  }
}
