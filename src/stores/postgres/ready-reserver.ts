/**
 * Consumers of every process reserving due tasks of a lane (SharedDispatch.reserveReady),
 * higher priorities first (reserve_pick_ranked, migration 0016, ADR 0057).
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
 * channel, or this process's own promote directly), or the sweep (due SWEEP_MS after the
 * lane's last one, reached by the wait that spans it or by the first call after it, one that
 * does not wait included: the safety net for a notification lost), or its signal aborts.
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
 * reconnected (notices may have been lost), clear the cursor.
 *
 * The safety net (ADR 0050, ADR 0055) is for a task skipped while another statement held it
 * locked and then let it go pending (a reserve that failed, a process that died mid-statement,
 * a transaction rolled back). Every FLOOR_SWEEP_MS a lane reads its floor in the background
 * (sql/due-floor.sql): the first pending task of the lane due by now, locked or not, after
 * the previous floor. A task held locked is pending in that read's snapshot, so the floor
 * stays at or before it until it is reserved; the cursor moves back to the floor, and the
 * next statement takes the task once it is free. Everything before the floor was not pending
 * and due when it was read, and a task that becomes so later is promoted: its notice moves
 * the floor back too. Reading from the floor, not from the beginning, matters when the xmin
 * horizon is held (an idle transaction, a long REPEATABLE READ reader): the first entries of
 * `tasks_due` are then every version reserved or acked since, which no scan can mark dead;
 * the walk from the beginning every 2 s grew to 0.7-1.3 s after 3 minutes at 1,500 tasks/s,
 * and every consumer of the lane that started meanwhile walked it too. Only every
 * FULL_WALK_MS does the read start from the beginning, still in the background: for a
 * promotion whose notice was lost with the listener still connected.
 */
import { reservedOf, type ReserveRow } from './task-writes.js';
import { isPushLane, topicOfLane, type ReservedTask } from '../../core/task/model.js';
import { nextNonce } from '../shared/nonce.js';
import type { ReadyWaiters } from '../../coordination/ready-waiters.js';
import type { PgContext } from './context.js';

/** The most tasks one statement reserves. */
const MAX_RESERVE = 1_000;
/** A lane reads its floor and moves its cursor back to it at least this often (see the header). */
export const FLOOR_SWEEP_MS = 2_000;
/** ... and reads it from the beginning at least this often. */
export const FULL_WALK_MS = 30_000;
/** After every position. */
const END_SEQ = Number.MAX_SAFE_INTEGER;

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

/** A lane's cursor, its floor and the statements in flight on it (see the header). */
interface LaneWalk {
  /** Where the next statement starts: after this position, or at the beginning (null). */
  cursor: DuePosition | null;
  /** No task of the lane at or before it was pending and due when last read, nor promoted since (null: not known). */
  floor: DuePosition | null;
  /** When the floor was last read, and last read from the beginning. */
  sweptAt: number;
  fullAt: number;
  sweeping: boolean;
  /** Reserve statements and the floor's read in flight. */
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
    // A call that does not wait (waitMs 0) never reaches the sweep in waiters.wait: it sweeps
    // here, or a task whose ready notice was lost is never looked for by such a consumer.
    this.waiters.sweepIfDue(lane);
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
      walk.floor = earlier(walk.floor, back);
      moveBack(walk, back);
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
      walk = { cursor: null, floor: null, sweptAt: now, fullAt: now, sweeping: false, flights: new Set() };
      this.walks.set(lane, walk);
    }
    if (!walk.sweeping && now - walk.sweptAt >= FLOOR_SWEEP_MS) void this.sweep(lane, walk, now);
    const cursor = walk.cursor;
    const flight: Flight = { low: undefined };
    walk.flights.add(flight);
    try {
      const rows = await this.statement(lane, max, now, ttrMs, cursor);
      // The cursor walks the tasks of priority 0 only; the others are read from their own
      // index from its beginning each time (migration 0016, ADR 0057).
      let last: (typeof rows)[number] | undefined;
      for (const row of rows) if (Number(row.picked_priority) === 0) last = row;
      // Past the last task taken; where it started if it took none (nothing after that was due
      // and free), unless a notice pointed earlier meanwhile.
      const reached = last === undefined ? cursor : { dueAt: last.picked_due, seq: last.picked_seq };
      walk.cursor = flight.low === undefined ? reached : earlier(reached, flight.low);
      return rows.map(reservedOf);
    } finally {
      walk.flights.delete(flight);
    }
  }

  /**
   * Reads the lane's floor (from the beginning every FULL_WALK_MS) and moves the cursor, and
   * the statements in flight, back to it; in the background: the lane's reserves go on. A
   * failed read changes nothing (the next one is FLOOR_SWEEP_MS later).
   */
  private async sweep(lane: string, walk: LaneWalk, now: number): Promise<void> {
    walk.sweeping = true;
    walk.sweptAt = now;
    const full = now - walk.fullAt >= FULL_WALK_MS;
    const from = full ? null : walk.floor;
    const flight: Flight = { low: undefined };
    walk.flights.add(flight);
    try {
      const rows = await this.pg.query<{ due_at: number; seq: number }>(this.pg.sql('due-floor'), [topicOfLane(lane), isPushLane(lane), now, from?.dueAt ?? -1, from?.seq ?? -1]);
      if (full) walk.fullAt = now;
      const first = rows[0];
      // Nothing pending and due after `from` by now: what becomes so later is promoted.
      const read = first === undefined ? { dueAt: now, seq: END_SEQ } : { dueAt: first.due_at, seq: first.seq - 1 };
      const floor = flight.low === undefined ? read : earlier(read, flight.low);
      walk.floor = floor;
      walk.flights.delete(flight);
      // A null cursor already starts from the beginning.
      if (walk.cursor !== null && (floor === null || before(floor, walk.cursor))) {
        moveBack(walk, floor);
        this.waiters.notify(lane, 0);
      }
    } catch {
      // The next sweep reads it again.
    } finally {
      walk.flights.delete(flight);
      walk.sweeping = false;
    }
  }

  private statement(lane: string, max: number, now: number, ttrMs: number | undefined, cursor: DuePosition | null): Promise<(ReserveRow & { picked_due: number; picked_seq: number; picked_priority: number })[]> {
    return this.pg.query<ReserveRow & { picked_due: number; picked_seq: number; picked_priority: number }>(
      this.pg.sql('reserve-due'),
      [topicOfLane(lane), now, nextNonce(), ttrMs ?? null, this.pg.slotOf('reserve'), max, cursor?.dueAt ?? -1, cursor?.seq ?? -1, isPushLane(lane)],
    );
  }
}

/** The cursor, and what each statement in flight will leave it at, no later than `back` (null: the beginning). */
function moveBack(walk: LaneWalk, back: DuePosition | null): void {
  walk.cursor = earlier(walk.cursor, back);
  for (const flight of walk.flights) flight.low = flight.low === undefined ? back : earlier(flight.low, back);
}
