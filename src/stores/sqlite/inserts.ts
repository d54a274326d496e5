/**
 * Inserting new tasks, the hot path of scheduleMany: a batch is written with multi-row
 * INSERT statements of up to MAX_ROWS rows each, not one statement per row.
 *
 * Why: each execution of a statement has a fixed cost in SQLite and in better-sqlite3
 * (the call into C++, resetting the statement, opening its cursors, the once-per-execution
 * setup of its constraint checks), which a row-at-a-time insert pays a thousand times per
 * batch of 1,000 tasks.
 *
 * seq is assigned here, not by SQLite: the rows of a call get seq = max(seq) + 1 + i in
 * batch order (what SQLite itself would assign, so insertion order is unchanged), which
 * tells which row got which seq without asking. A row whose id exists (in the table, or
 * earlier in the same batch) is skipped by ON CONFLICT (id) DO NOTHING and leaves its seq
 * unused; when a statement changed fewer rows than it carried, one range read of the seqs
 * it used tells which rows were created, and the existing task's runAt is read for the
 * others (created: false, the task untouched).
 *
 * Statements are prepared lazily for chunk sizes that are powers of two (MAX_ROWS, then
 * 64, 32, ... 1 for the remainder): ~10 executions per 1,000 tasks. When every task of a
 * chunk has the same maxAttempts, ttrMs and backoff (the defaults, usually), a variant
 * binds those and the time once, by name, instead of on every row: 7 values a row, not 15.
 * At most sixteen statements (eight sizes, two variants).
 *
 * The seq of each created row that parks is noted with Parking.record, which files the
 * transaction's runs at COMMIT: ~40 short rows for batches with delays over 30 days.
 */
import type Database from 'better-sqlite3';
import type { ScheduleOutcome } from '../../core/ports/index.js';
import type { NewTaskRecord } from '../../core/task/model.js';
import type { CountDeltas } from './count-deltas.js';
import { laneOf } from '../../core/task/model.js';
import { runRef } from './rows.js';

/** Rows per INSERT statement at most (a power of two; ADR 0015); 15 parameters a row stay far below SQLite's 32,766. */
export const MAX_ROWS = 128;

/** Parameters a row binds: all 15 values, or 7 when the settings are shared. */
const ROW_PARAMS = 15;
const SHARED_ROW_PARAMS = 7;
const ROW = "(?, ?, ?, 'pending', ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)";
/** The same row when every task of the chunk has the same settings: those are bound once, by name. */
const SHARED_ROW = "(?, ?, ?, 'pending', ?, ?, ?, 0, @maxAttempts, @ttrMs, @baseMs, @factor, @maxMs, @jitter, @now, @now, ?)";

type Insert = Database.Statement<unknown[], never>;
type BucketFor = (runAt: number) => number | null;
/** Notes a row just parked: its run (Parking.record) and its count (CountDeltas.parked). */
type RecordParked = (bucket: number, seq: number, topic: string, runAt: number, counts: CountDeltas) => void;

/** What the chunks of one insert call share. */
interface Batch {
  readonly tasks: readonly NewTaskRecord[];
  /** The seq of tasks[0]; tasks[i] gets firstSeq + i. */
  readonly firstSeq: number;
  readonly now: number;
  readonly bucketFor: BucketFor;
  /** The park bucket each task got (NaN: filed in tasks_due), noted as its row is bound. */
  readonly parkedIn: Float64Array;
}

export class TaskInserter {
  private readonly inserts = new Map<number, Insert>();
  private readonly sharedInserts = new Map<number, Insert>();
  private readonly maxSeq: Database.Statement<[], number | null>;
  private readonly seqsIn: Database.Statement<[number, number], number>;
  private readonly runAtOf: Database.Statement<[string], number>;
  private readonly setUrl: Database.Statement<[string, number], never>;
  private readonly setTrace: Database.Statement<[string, number], never>;
  private readonly setPriority: Database.Statement<[number, number], never>;

  constructor(
    private readonly db: Database.Database,
    private readonly recordParked: RecordParked,
  ) {
    this.maxSeq = db.prepare<[], number | null>('SELECT max(seq) FROM tasks').pluck();
    this.seqsIn = db.prepare<[number, number], number>('SELECT seq FROM tasks WHERE seq >= ? AND seq < ?').pluck();
    this.runAtOf = db.prepare<[string], number>('SELECT run_at FROM tasks WHERE id = ?').pluck();
    this.setUrl = db.prepare<[string, number], never>('UPDATE tasks SET url = ? WHERE seq = ?');
    this.setTrace = db.prepare<[string, number], never>('UPDATE tasks SET trace = ? WHERE seq = ?');
    this.setPriority = db.prepare<[number, number], never>('UPDATE tasks SET priority = ? WHERE seq = ?');
  }

  /**
   * Inserts `tasks` in order (inside the caller's transaction); one outcome per task.
   * `bucketFor`: the park bucket of a runAt, or null to file it in tasks_due.
   */
  insert(tasks: readonly NewTaskRecord[], now: number, bucketFor: BucketFor, counts: CountDeltas): ScheduleOutcome[] {
    const outcomes = new Array<ScheduleOutcome>(tasks.length);
    const batch: Batch = { tasks, firstSeq: (this.maxSeq.get() ?? 0) + 1, now, bucketFor, parkedIn: new Float64Array(tasks.length) };
    const { firstSeq, parkedIn } = batch;
    let topic = '';
    let created = 0;
    for (let start = 0; start < tasks.length; ) {
      const size = chunkSize(tasks.length - start);
      const { changes } = sameSettings(tasks, start, size) ? this.insertShared(batch, start, size) : this.insertEach(batch, start, size);
      // Which rows of this chunk were created: all of them, or those whose seq is now taken.
      let taken: Set<number> | null = null;
      if (changes < size) taken = new Set(changes === 0 ? [] : this.seqsIn.all(firstSeq + start, firstSeq + start + size));
      for (let i = start; i < start + size; i++) {
        const task = tasks[i]!;
        const seq = firstSeq + i;
        if (taken === null || taken.has(seq)) {
          if (task.topic !== topic) {
            if (created > 0) counts.moved(topic, null, 'pending', created);
            topic = task.topic;
            created = 0;
          }
          created++;
          if (!Number.isNaN(parkedIn[i]!)) this.recordParked(parkedIn[i]!, seq, task.topic, task.runAt, counts);
          if (task.url !== undefined) this.setUrl.run(task.url, seq);
          if (task.trace !== undefined) this.setTrace.run(task.trace, seq);
          if (task.priority !== undefined) this.setPriority.run(task.priority, seq);
          outcomes[i] = { id: task.id, runAt: task.runAt, created: true, ref: runRef(task.id, laneOf(task.topic, task.url), task.runAt, seq, task.priority) };
        } else {
          outcomes[i] = { id: task.id, runAt: this.runAtOf.get(task.id) ?? task.runAt, created: false, ref: null };
        }
      }
      start += size;
    }
    if (created > 0) counts.moved(topic, null, 'pending', created);
    return outcomes;
  }

  private insertEach(batch: Batch, start: number, size: number): Database.RunResult {
    const params = new Array<unknown>(size * ROW_PARAMS);
    const { tasks, now } = batch;
    let p = 0;
    for (let i = start; i < start + size; i++) {
      const task = tasks[i]!;
      const { backoff } = task;
      p = putRowHead(params, p, batch, i);
      params[p++] = task.maxAttempts;
      params[p++] = task.ttrMs;
      params[p++] = backoff.baseMs;
      params[p++] = backoff.factor;
      params[p++] = backoff.maxMs;
      params[p++] = backoff.jitter;
      params[p++] = now;
      params[p++] = now;
      params[p++] = task.payload;
    }
    return this.statement(this.inserts, ROW, size).run(...params);
  }

  private insertShared(batch: Batch, start: number, size: number): Database.RunResult {
    const params = new Array<unknown>(size * SHARED_ROW_PARAMS + 1);
    const { tasks, now } = batch;
    let p = 0;
    for (let i = start; i < start + size; i++) {
      p = putRowHead(params, p, batch, i);
      params[p++] = tasks[i]!.payload;
    }
    const { maxAttempts, ttrMs, backoff } = tasks[start]!;
    params[p] = { maxAttempts, ttrMs, baseMs: backoff.baseMs, factor: backoff.factor, maxMs: backoff.maxMs, jitter: backoff.jitter, now };
    return this.statement(this.sharedInserts, SHARED_ROW, size).run(...params);
  }

  private statement(cache: Map<number, Insert>, row: string, size: number): Insert {
    let statement = cache.get(size);
    if (statement === undefined) {
      statement = this.db.prepare<unknown[], never>(
        `INSERT INTO tasks (seq, id, topic, state, run_at, due_at, park_bucket, attempts, max_attempts, ttr_ms,
                            backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, created_at, updated_at, payload)
         VALUES ${Array.from({ length: size }, () => row).join(', ')}
         ON CONFLICT (id) DO NOTHING`,
      );
      cache.set(size, statement);
    }
    return statement;
  }
}

/** Whether tasks[start .. start + size) all have the settings of the first (the defaults, usually). */
function sameSettings(tasks: readonly NewTaskRecord[], start: number, size: number): boolean {
  const first = tasks[start]!;
  const b = first.backoff;
  for (let i = start + 1; i < start + size; i++) {
    const task = tasks[i]!;
    if (task.maxAttempts !== first.maxAttempts || task.ttrMs !== first.ttrMs) return false;
    const o = task.backoff;
    if (o !== b && (o.baseMs !== b.baseMs || o.factor !== b.factor || o.maxMs !== b.maxMs || o.jitter !== b.jitter)) return false;
  }
  return true;
}

/** MAX_ROWS while that many are left, then the largest power of two that fits. */
function chunkSize(left: number): number {
  if (left >= MAX_ROWS) return MAX_ROWS;
  return 2 ** Math.floor(Math.log2(left));
}

/**
 * The columns every insert form starts with (seq, id, topic, run_at, due_at, park_bucket)
 * for batch.tasks[index]; notes its park bucket (or NaN) in batch.parkedIn; returns the
 * next parameter index.
 */
function putRowHead(params: unknown[], at: number, batch: Batch, index: number): number {
  const task = batch.tasks[index]!;
  const parkBucket = batch.bucketFor(task.runAt);
  batch.parkedIn[index] = parkBucket ?? Number.NaN;
  params[at] = batch.firstSeq + index;
  params[at + 1] = task.id;
  params[at + 2] = task.topic;
  params[at + 3] = task.runAt;
  params[at + 4] = parkBucket === null ? task.runAt : null;
  params[at + 5] = parkBucket;
  return at + 6;
}
