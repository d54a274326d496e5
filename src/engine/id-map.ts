/**
 * A map keyed by task id, split over 64 small Maps, whose values can die in place.
 *
 * Split: V8 rehashes a whole Map at once when it grows or shrinks; at 65,536 entries that
 * is a 5 ms stall (measured here; the driver's map of timers crossed it every time a burst
 * of 200,000 due tasks drained), inside a window where tasks are due every millisecond.
 * Split 64 ways, each rehash is 64 times smaller; the total work is the same.
 *
 * Dying in place: a timer that fires is forgotten with `released(id)`, which only counts
 * it; `get` no longer returns a value that `isLive` rejects, and a shard is rebuilt with
 * its live values once at least half of it is dead. A delete by key costs a few cache
 * misses (the key's hash, the bucket, the entry: 13% of a delivery's cost, profiled); a
 * rebuild walks the entries in order and copies only the live ones.
 *
 * The shard comes from two characters of the id (its last and its middle one): generated
 * ids end in a counter, so their last character alone spreads them evenly; user ids such
 * as `order-1234` still spread over ten shards or more.
 */
export class IdMap<V> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());
  /** Values released in each shard since it was last rebuilt (an upper bound of the dead). */
  private readonly released_ = new Uint32Array(SHARDS);

  constructor(private readonly isLive: (value: V) => boolean = () => true) {}

  /** Entries held, dead ones not yet swept included. */
  get size(): number {
    let size = 0;
    for (const shard of this.shards) size += shard.size;
    return size;
  }

  /** The live value under `id`. */
  get(id: string): V | undefined {
    const value = this.shards[shardOf(id)]!.get(id);
    return value !== undefined && this.isLive(value) ? value : undefined;
  }

  set(id: string, value: V): void {
    this.shards[shardOf(id)]!.set(id, value);
  }

  delete(id: string): boolean {
    return this.shards[shardOf(id)]!.delete(id);
  }

  /** Says that the value under `id` has died: it goes at the next rebuild of its shard. */
  released(id: string): void {
    const index = shardOf(id);
    const shard = this.shards[index]!;
    if (++this.released_[index]! >= Math.max(MIN_SWEEP, shard.size >> 1)) this.rebuild(index);
  }

  private rebuild(index: number): void {
    const live = new Map<string, V>();
    for (const [id, value] of this.shards[index]!) if (this.isLive(value)) live.set(id, value);
    this.shards[index] = live;
    this.released_[index] = 0;
  }
}

const SHARDS = 64;
/** Below this many released values a shard is not worth rebuilding. */
const MIN_SWEEP = 256;

function shardOf(id: string): number {
  // charCodeAt past the end is NaN, and NaN & 63 is 0: the empty id has a shard too.
  return (id.charCodeAt(id.length - 1) + 7 * id.charCodeAt(id.length >> 1)) & (SHARDS - 1);
}
