/**
 * Parking: keeps far-future tasks out of the due index until their time comes near.
 *
 * Why: tasks_due is ordered by due time, so a batch of tasks with random delays (1 h ..
 * 30 d) lands on as many different index pages as it has tasks, and every one of those
 * pages is rewritten into the WAL at COMMIT: with millions pending, most of the cost of an
 * insert (ADR 0015). So a new task due in a later bucket of BUCKET_MS (2^26 ms, ~18.6 h) is not
 * put in tasks_due: its row says which bucket it is parked in (park_bucket), and the
 * transaction that parks it appends a *run* to parked_runs: the bucket and the seqs it
 * parked there, packed into one BLOB (seq-runs.ts), written just before COMMIT, so the
 * single schedule() calls of one group commit share a run per bucket.
 *
 * Why runs and not an index on (park_bucket, seq), which the schema had until 0003: such
 * an index takes a batch's rows at ~40 places (one per bucket of a 30-day spread), and
 * those ~40 pages written at every COMMIT were a large share of a scheduleMany's cost
 * (ADR 0015). parked_runs is a plain table appended at its end: a batch adds one short row per bucket
 * it touches, on two or three pages.
 *
 * `frontier` is the first bucket that may hold parked tasks: every pending task due in an
 * earlier bucket is in tasks_due. Before loadDue(until) reads tasks_due it makes sure the
 * frontier is past `until`, and it moves the frontier one more bucket ahead in the
 * background, so in steady state a bucket is unparked ~18 h before it is due and loadDue
 * never waits. Moving the frontier to `target` is a *pass* over parked_runs in run order:
 * every run of a bucket below target has its rows moved to tasks_due and is deleted; the
 * others stay. A pass goes in steps, one transaction each, of at most SCAN_RUNS runs read
 * and about UNPARK_BATCH rows moved, so it never stalls the event loop; the step that
 * reaches the end of the table moves the frontier in the same transaction (run numbers
 * only grow, AUTOINCREMENT, so a run appended during the pass is met further on).
 *
 *   now = 10:00 in bucket 7, horizon 60 s    frontier = 9 (buckets 7 and 8 unparked)
 *   schedule(runAt in bucket 8)              -> tasks_due (8 < frontier)
 *   schedule(runAt in bucket 30)             -> parked, a run (30, [seq]) appended
 *   time reaches bucket 8: loadDue           -> background: a pass to 10, frontier = 10
 *
 * A pass reads the whole table, so it is skipped when `floor` shows it has nothing to do:
 * every run is known to have a bucket >= floor (a pass that ends learns the lowest bucket
 * it left behind; every run written since lowers it). A row that a run names but that is
 * no longer parked in that bucket (cancelled, rescheduled, reserved, purged) is left alone:
 * the move is `WHERE seq = ? AND park_bucket = ?`.
 *
 * The frontier is kept in parking_state, written by the step that moves it, so an open
 * starts where the last pass ended (0 on a new file: until the first loadDue every new task
 * parks) and a restart within the same bucket needs no pass before its first loadDue. The
 * floor starts at the frontier: a pass to the frontier left no run below it, and no run has
 * been written below it since. If a step's transaction fails, the frontier goes back and
 * the floor is forgotten (a lower frontier and a lower floor are always safe: more tasks
 * park, and more passes run). An unbounded loadDue moves the frontier to infinity in
 * memory only: stored, it would stop all parking for good.
 */
import type Database from 'better-sqlite3';
import { DelayQError } from '../../core/errors.js';
import { decodeSeqs, encodeSeqs } from './seq-runs.js';
import type { Statements } from './statements.js';

/** The width of a bucket in a file created with the defaults (parking_state.bucket_ms): ~18.6 h, unparked a bucket ahead (ADR 0015). */
export const BUCKET_MS = 2 ** 26;
/** Rows unparked per transaction, about (whole runs are moved): one step never stalls the loop (ADR 0015). */
export const UNPARK_BATCH = 500;
/** Runs one step reads at most, for the same reason (ADR 0015). */
export const SCAN_RUNS = 1_000;
/** Seqs one run holds at most, so that moving a run is always a short piece of work (ADR 0015). */
export const MAX_RUN = 256;

export type Submit = <T>(weight: number, apply: () => T) => Promise<T>;

export function bucketOf(time: number, bucketMs = BUCKET_MS): number {
  return Math.floor(time / bucketMs);
}

/**
 * Gives a file another bucket width, for tests that want parking to happen within seconds
 * (the crash test). Only while nothing is parked: bucket numbers already written mean
 * something only with the width they were computed with. The frontier starts over at 0.
 */
export function chooseBucketWidth(db: Database.Database, bucketMs: number): void {
  if (!Number.isInteger(bucketMs) || bucketMs < 1)
    throw new DelayQError('INVALID_OPTION', `parkBucketMs: must be a positive integer (got ${String(bucketMs)})`, { field: 'parkBucketMs' });
  db.transaction(() => {
    const current = db.prepare<[], number>('SELECT bucket_ms FROM parking_state WHERE id = 1').pluck().get();
    if (current === bucketMs) return;
    const parked = db
      .prepare<[], number>('SELECT EXISTS (SELECT 1 FROM parked_runs) OR EXISTS (SELECT 1 FROM tasks WHERE park_bucket IS NOT NULL)')
      .pluck()
      .get();
    if (parked)
      throw new DelayQError('INVALID_OPTION', `parkBucketMs: this file parks tasks in buckets of ${String(current)} ms and holds parked tasks`, {
        field: 'parkBucketMs',
      });
    db.prepare('UPDATE parking_state SET bucket_ms = ?, frontier = 0 WHERE id = 1').run(bucketMs);
  }).immediate();
}

/** Where a pass has got to. */
interface Pass {
  readonly target: number;
  cursor: number;
  /** The lowest bucket of the runs it read and kept. */
  lowestKept: number;
}

export class Parking {
  private frontier: number;
  private floor: number;
  /** The file's bucket width: 2^26 ms unless it was created for a test with another. */
  private readonly bucketMs: number;
  private background: Promise<void> | null = null;
  /** Seqs parked by the transaction under way, by bucket (record, flush). */
  private readonly noted = new Map<number, number[]>();

  constructor(
    private readonly sql: Statements,
    private readonly submit: Submit,
    /** A background pass failed (the next prepare retries it). */
    private readonly onBackgroundError: (error: unknown) => void = () => undefined,
  ) {
    const state = sql.parkingState.get();
    this.frontier = state?.frontier ?? 0;
    this.floor = this.frontier;
    this.bucketMs = state?.bucket_ms ?? BUCKET_MS;
  }

  /** Every pending task due before this time is in tasks_due (the frontier's start). */
  indexedUntil(): number {
    return this.frontier * this.bucketMs;
  }

  /** The bucket to park a new pending task in, or null to file it in tasks_due. */
  bucketFor(runAt: number): number | null {
    const bucket = bucketOf(runAt, this.bucketMs);
    return bucket >= this.frontier ? bucket : null;
  }

  /** Notes a row just parked in `bucket`, by seq; flush() files it when its transaction commits. */
  record(bucket: number, seq: number): void {
    const noted = this.noted.get(bucket);
    if (noted === undefined) this.noted.set(bucket, [seq]);
    else noted.push(seq);
  }

  /**
   * Files what record() noted, as the last writes of the transaction (GroupCommit's
   * beforeCommit): one run per bucket for every write of the transaction, not one per call.
   * A bucket the frontier has passed since (a pass ended in this same transaction) is not
   * filed but moved to tasks_due at once. Seqs of writes that were rolled back (a failed
   * entry, or a transaction that never got here) name rows that do not exist or are not
   * parked in that bucket, which every move passes over.
   */
  flush(): void {
    if (this.noted.size === 0) return;
    for (const [bucket, seqs] of this.noted) {
      if (bucket < this.frontier) {
        for (const seq of seqs) this.sql.unparkSeq.run(seq, bucket);
        continue;
      }
      for (let i = 0; i < seqs.length; i += MAX_RUN) this.sql.addRun.run(bucket, encodeSeqs(seqs.slice(i, i + MAX_RUN)));
      if (bucket < this.floor) this.floor = bucket;
    }
    this.noted.clear();
  }

  /** Resolves once no task due before `until` is parked. */
  async prepare(until: number): Promise<void> {
    const required = Number.isFinite(until) ? bucketOf(until - 1, this.bucketMs) + 1 : Number.POSITIVE_INFINITY;
    if (this.frontier < required) await this.unparkBelow(required);
    if (this.frontier < required + 1 && this.background === null) {
      // A failed background pass is retried by the next loadDue; nothing depends on it.
      this.background = this.unparkBelow(required + 1).then(
        () => undefined,
        (error: unknown) => this.onBackgroundError(error),
      );
      void this.background.finally(() => (this.background = null));
    }
  }

  private async unparkBelow(target: number): Promise<void> {
    const pass: Pass = { target, cursor: 0, lowestKept: Number.POSITIVE_INFINITY };
    while (this.frontier < target) {
      const before = this.frontier;
      try {
        await this.submit(UNPARK_BATCH, () => this.step(pass));
      } catch (error) {
        this.frontier = Math.min(this.frontier, before);
        this.floor = 0;
        throw error;
      }
    }
  }

  /** One transaction of a pass; moves the frontier to the pass's target once it is done. */
  private step(pass: Pass): void {
    if (this.floor < pass.target) {
      const runs = this.sql.runsAfter.all(pass.cursor, SCAN_RUNS);
      let moved = 0;
      for (const [run, bucket, packed] of runs) {
        pass.cursor = run;
        if (bucket >= pass.target) {
          if (bucket < pass.lowestKept) pass.lowestKept = bucket;
          continue;
        }
        const seqs = decodeSeqs(packed);
        for (const seq of seqs) this.sql.unparkSeq.run(seq, bucket);
        this.sql.dropRun.run(run);
        moved += seqs.length;
        if (moved >= UNPARK_BATCH) return;
      }
      if (runs.length === SCAN_RUNS) return;
      // The end of parked_runs: every run below the target is gone, and the ones left (and
      // any written later, which lower the floor themselves) are at lowestKept or above.
      this.floor = pass.lowestKept;
    }
    if (pass.target > this.frontier) {
      this.frontier = pass.target;
      if (Number.isFinite(pass.target)) this.sql.setFrontier.run(pass.target);
    }
  }
}
