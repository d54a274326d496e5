/**
 * A hierarchical timing wheel (Varghese & Lauck; the shape of Kafka's TimingWheel) driven
 * by a queue of non-empty buckets, so that inserting and cancelling a timer cost O(1)
 * and the clock skips empty ticks instead of walking through them.
 *
 * Time is counted in ticks of `tickMs` (default 1 ms). A value due at `runAt` is due at
 * tick `ceil(runAt / tickMs)`: rounding up is what makes the wheel never early.
 *
 * Level 0 has `wheelSize` (W, default 64) slots of one tick each and covers the next W
 * ticks; level L has W slots of W^L ticks each and covers W^(L+1) ticks. Levels are
 * created on demand, so a ten-year delay at 1 ms needs 7 levels of 64 slots and nothing
 * else. A value goes to the lowest level whose span (from the current time, truncated to
 * the level's slot width) reaches its tick; its bucket is slot floor(tick / W^L) mod W,
 * and the bucket's expiration is the first tick of that slot. A level never holds two
 * spans in one slot at once, because it only ever holds the W-1 spans after the current
 * one (plus, split ahead, the W after those); that is what lets buckets be reused
 * without being tagged.
 *
 * `advance(now)` pops buckets in expiration order. A level-0 bucket is due as a whole.
 * A bucket of a higher level is split: each of its values goes back in, now landing in a
 * finer level (or is due, if its own tick has come). Each value moves down at most once
 * per level. The values due in one advance are returned sorted by (runAt, insertion),
 * which only costs a sort when a stall mixed buckets of several levels.
 *
 * Splitting ahead. Split only at its expiration, a coarse bucket is a stall: 200,000
 * tasks due within the same 4.096 s slot of level 2 are all re-placed in one call, some
 * 20 ms during which nothing fires. So each level has 2W slots, not W: besides the W
 * spans it covers, it can hold the W spans of the next bucket of the level above, and
 * `splitAhead(limit)` moves up to `limit` values from those next buckets down one level
 * early, in slices the driver runs between deliveries. A value still moves down at most
 * once per level; only the time of the move changes. Why 2W is enough: with the clock in
 * slot c of level L-1 (slot width u), the next bucket of level L starts at slot
 * (floor(c / W) + 1) * W <= c + W and spans W slots, so it ends before c + 2W, while
 * every slot below c has already been popped: the live slots of a level always fit a
 * ring of 2W.
 *
 * Worked example, tickMs 1, W 4 (levels cover 4 ms, 16 ms, 64 ms...), the clock at 0:
 *   add A at 3   -> level 0 (3 < 0 + 4), slot 3, bucket expires at 3
 *   add B at 9   -> level 1 (9 < 0 + 16), slot floor(9/4) % 4 = 2, bucket expires at 8
 *   add C at 9   -> same bucket as B, after it
 *   add D at 40  -> level 2 (40 < 0 + 64), slot floor(40/16) % 4 = 2, expires at 32
 *   nextDeadline() = 3
 *   advance(3)   -> [A]; nextDeadline() = 8 (B and C's coarse bucket must be split)
 *   advance(8)   -> []: B, C go back in at level 0 (9 < 8 + 4), slot 1, expiring at 9
 *   advance(20)  -> [B, C] (in insertion order); nothing is scanned between 9 and 20
 *   advance(45)  -> pops D's bucket at 32 and reinserts D at level 1 (slot 2, expiring
 *                   40), pops that at 40, where D's own tick has come: [D]
 * Had the event loop stalled from 0 to 45, advance(45) would return [A, B, C, D].
 */
import { Bucket } from './bucket.js';
import { BucketQueue } from './bucket-queue.js';
import type { Timer, TimerHandle } from './timer.js';
import { TimerEntry, compareEntries } from './timer-entry.js';

export interface TimingWheelOptions {
  /** Width of one tick in ms: the precision. Default 1. */
  tickMs?: number;
  /** Slots per level, at least 2. Default 64. */
  wheelSize?: number;
  /** Time the wheel starts at (epoch ms). */
  startMs: number;
}

export class TimingWheel<T> implements Timer<T> {
  readonly tickMs: number;
  readonly wheelSize: number;
  /** Buckets per level: 2 * wheelSize, so the next span of the level above fits (see header). */
  private readonly ringSize: number;
  private readonly levels: Bucket<T>[][] = [];
  /** Slot width of each level in ticks: wheelSize^level. */
  private readonly units: number[] = [];
  /** First tick beyond each level's span from the current time (cached: it changes only as time moves). */
  private readonly levelEnds: number[] = [];
  private readonly queue = new BucketQueue<T>();
  /**
   * Ticks are counted from the wheel's start, so near ticks stay small integers: V8 keeps
   * them unboxed and its integer modulo is far cheaper than the float one epoch ticks need.
   */
  private readonly originTick: number;
  private currentTick = 0;
  private nextSeq = 0;
  private count = 0;

  constructor(options: TimingWheelOptions) {
    this.tickMs = options.tickMs ?? 1;
    this.wheelSize = options.wheelSize ?? 64;
    this.ringSize = 2 * this.wheelSize;
    if (!Number.isInteger(this.tickMs) || this.tickMs < 1) throw new RangeError('tickMs must be a positive integer');
    if (!Number.isInteger(this.wheelSize) || this.wheelSize < 2) throw new RangeError('wheelSize must be an integer >= 2');
    if (!Number.isFinite(options.startMs)) throw new RangeError('startMs must be finite');
    this.originTick = Math.floor(options.startMs / this.tickMs);
    this.addLevel();
  }

  get size(): number {
    return this.count;
  }

  /** The time the wheel was last advanced to, truncated to a tick. */
  get currentTimeMs(): number {
    return (this.originTick + this.currentTick) * this.tickMs;
  }

  add(runAt: number, value: T): TimerHandle<T> | undefined {
    if (!Number.isFinite(runAt)) throw new RangeError(`runAt must be finite, got ${runAt}`);
    const tick = Math.ceil(runAt / this.tickMs) - this.originTick;
    if (tick <= this.currentTick) return undefined;
    const entry = new TimerEntry(value, runAt, this.nextSeq++, tick);
    this.place(entry);
    this.count++;
    return entry;
  }

  cancel(handle: TimerHandle<T>): boolean {
    const entry = handle as TimerEntry<T>;
    const bucket = entry.bucket;
    if (bucket === null) return false;
    bucket.remove(entry);
    this.count--;
    if (bucket.count === 0) {
      // An empty bucket leaves the queue, so nextDeadline never points at nothing.
      this.queue.remove(bucket);
      bucket.expiration = -1;
    }
    return true;
  }

  advance(nowMs: number): T[] {
    const nowTick = Math.floor(nowMs / this.tickMs) - this.originTick;
    if (nowTick <= this.currentTick) return [];
    const due: TimerEntry<T>[] = [];
    for (let bucket = this.queue.peek(); bucket !== undefined && bucket.expiration <= nowTick; bucket = this.queue.peek()) {
      this.queue.pop();
      this.moveTo(bucket.expiration);
      const isLeaf = bucket.level === 0;
      let entry = bucket.detach();
      while (entry !== null) {
        const next = entry.next;
        if (isLeaf || entry.tick <= this.currentTick) {
          entry.next = null;
          due.push(entry);
          this.count--;
        } else {
          this.place(entry);
        }
        entry = next;
      }
    }
    this.moveTo(nowTick);
    if (!isSorted(due)) due.sort(compareEntries);
    const values = new Array<T>(due.length);
    for (let i = 0; i < due.length; i++) values[i] = due[i]!.value;
    return values;
  }

  nextDeadline(): number | undefined {
    const bucket = this.queue.peek();
    return bucket === undefined ? undefined : (this.originTick + bucket.expiration) * this.tickMs;
  }

  private moveTo(tick: number): void {
    this.currentTick = tick;
    const size = this.wheelSize;
    for (let level = 0; level < this.units.length; level++) {
      const unit = this.units[level]!;
      this.levelEnds[level] = tick - (tick % unit) + unit * size;
    }
  }

  private place(entry: TimerEntry<T>): void {
    const tick = entry.tick;
    // The lowest level whose span, from now truncated to its slot width, reaches the tick.
    let level = 0;
    while (tick >= this.levelEnds[level]!) {
      level++;
      if (level === this.units.length) this.addLevel();
    }
    const unit = this.units[level]!;
    const virtualSlot = level === 0 ? tick : Math.floor(tick / unit);
    this.putInSlot(entry, level, virtualSlot, unit);
  }

  private putInSlot(entry: TimerEntry<T>, level: number, virtualSlot: number, unit: number): void {
    const bucket = this.levels[level]![virtualSlot % this.ringSize]!;
    bucket.append(entry);
    if (bucket.expiration < 0) {
      bucket.expiration = virtualSlot * unit;
      this.queue.push(bucket);
    }
  }

  /** True when `splitAhead` has something to move: the next bucket of some level above 0 holds values. */
  hasSplitWork(): boolean {
    for (let level = 1; level < this.units.length; level++) if (this.nextBucket(level) !== null) return true;
    return false;
  }

  /** The bucket after the current one at `level`, or null when it holds nothing. */
  private nextBucket(level: number): Bucket<T> | null {
    const unit = this.units[level]!;
    const nextSlot = Math.floor(this.currentTick / unit) + 1;
    const bucket = this.levels[level]![nextSlot % this.ringSize]!;
    // An empty bucket has expiration -1; a live one at this index can only be nextSlot's.
    return bucket.expiration === nextSlot * unit ? bucket : null;
  }

  /**
   * Moves up to `limit` values from the next bucket of each level above 0 down one level,
   * before that bucket is due (see the header). Returns how many moved: fewer than `limit`
   * means nothing is left to split ahead until time moves on or values are added.
   */
  splitAhead(limit: number): number {
    let moved = 0;
    for (let level = 1; level < this.units.length && moved < limit; level++) {
      const bucket = this.nextBucket(level);
      if (bucket === null) continue;
      const finer = this.units[level - 1]!;
      while (moved < limit && bucket.head !== null) {
        const entry = bucket.head;
        bucket.remove(entry);
        this.putInSlot(entry, level - 1, level === 1 ? entry.tick : Math.floor(entry.tick / finer), finer);
        moved++;
      }
      if (bucket.count === 0) {
        this.queue.remove(bucket);
        bucket.expiration = -1;
      }
    }
    return moved;
  }

  private addLevel(): void {
    const level = this.levels.length;
    const unit = level === 0 ? 1 : this.units[level - 1]! * this.wheelSize;
    this.units.push(unit);
    this.levels.push(Array.from({ length: this.ringSize }, () => new Bucket<T>(level)));
    this.levelEnds.push(this.currentTick - (this.currentTick % unit) + unit * this.wheelSize);
  }
}

function isSorted<T>(entries: readonly TimerEntry<T>[]): boolean {
  for (let i = 1; i < entries.length; i++) if (compareEntries(entries[i - 1]!, entries[i]!) > 0) return false;
  return true;
}
