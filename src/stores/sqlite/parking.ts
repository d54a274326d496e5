/**
 * Parking: keeps far-future tasks out of the due index until their time comes near.
 *
 * Why: tasks_due is ordered by due time, so a batch of tasks with random delays (1 h ..
 * 30 d) lands on as many different index pages as it has tasks, and every one of those
 * pages is rewritten into the WAL at COMMIT. With 10M pending that is most of the cost of
 * an insert. So a new task due in a later bucket of BUCKET_MS (2^26 ms, ~18.6 h) is filed
 * by (park_bucket, seq) instead: seq only grows, so new rows land at the end of their
 * bucket and a batch touches one page per bucket (~40 for 30 days), not one per task.
 *
 * `frontier` is the first bucket that may hold parked tasks: every pending task due in an
 * earlier bucket is in tasks_due. Before loadDue(until) reads tasks_due it makes sure the
 * frontier is past `until` (unparking, in transactions of UNPARK_BATCH rows, whatever is
 * parked below), and it moves the frontier one more bucket ahead in the background, so in
 * steady state a bucket is unparked ~18 h before it is due and loadDue never waits.
 *
 *   now = 10:00 in bucket 7, horizon 60 s    frontier = 9 (buckets 7 and 8 unparked)
 *   schedule(runAt in bucket 8)              -> tasks_due (8 < frontier)
 *   schedule(runAt in bucket 30)             -> parked at the end of bucket 30
 *   time reaches bucket 8: loadDue           -> background: unpark bucket 9, frontier = 10
 *
 * The frontier lives in memory and starts at 0 on open: until the first loadDue every new
 * task parks, and that first loadDue unparks what it needs. A step that drains the last
 * bucket below its target moves the frontier in the same transaction: new tasks of that
 * bucket keep arriving between two steps under a steady stream of inserts, so a step that
 * only moved rows would be followed by another forever (one extra transaction per insert
 * transaction). If that transaction fails, the frontier goes back (a lower frontier is
 * always safe: more tasks park, and prepare() unparks them before it reads).
 */
import type { Statements } from './statements.js';

export const BUCKET_MS = 2 ** 26;
/** Rows unparked per transaction: small enough that one step never stalls the event loop. */
export const UNPARK_BATCH = 500;

export type Submit = <T>(weight: number, apply: () => T) => Promise<T>;

export function bucketOf(time: number): number {
  return Math.floor(time / BUCKET_MS);
}

export class Parking {
  private frontier = 0;
  private background: Promise<void> | null = null;

  constructor(
    private readonly sql: Statements,
    private readonly submit: Submit,
  ) {}

  /** The bucket to park a new pending task in, or null to file it in tasks_due. */
  bucketFor(runAt: number): number | null {
    const bucket = bucketOf(runAt);
    return bucket >= this.frontier ? bucket : null;
  }

  /** Resolves once no task due before `until` is parked. */
  async prepare(until: number): Promise<void> {
    const required = Number.isFinite(until) ? bucketOf(until - 1) + 1 : Number.POSITIVE_INFINITY;
    if (this.frontier < required) await this.unparkBelow(required);
    if (this.frontier < required + 1 && this.background === null) {
      // A failed background step is retried by the next loadDue; nothing depends on it.
      this.background = this.unparkBelow(required + 1).then(
        () => undefined,
        () => undefined,
      );
      void this.background.finally(() => (this.background = null));
    }
  }

  private async unparkBelow(target: number): Promise<void> {
    while (this.frontier < target) {
      const before = this.frontier;
      try {
        await this.submit(UNPARK_BATCH, () => this.step(target));
      } catch (error) {
        this.frontier = Math.min(this.frontier, before);
        throw error;
      }
    }
  }

  /** One transaction: unpark a batch of the lowest parked bucket; advance the frontier once none is left below target. */
  private step(target: number): void {
    let lowest = this.sql.lowestParked.get();
    if (lowest !== undefined && lowest.park_bucket < target) {
      if (this.sql.unpark.run(lowest.park_bucket, UNPARK_BATCH).changes === UNPARK_BATCH) return;
      lowest = this.sql.lowestParked.get();
    }
    if (lowest === undefined || lowest.park_bucket >= target) this.frontier = Math.max(this.frontier, target);
  }
}
