/**
 * A map keyed by task id, split over SHARDS small Maps. V8 rehashes a whole Map at once
 * when it grows or shrinks, a stall of milliseconds for a map the size of the driver's
 * when a burst of due tasks drains (ADR 0019). Split SHARDS ways, each rehash is that much
 * smaller; the total work is the same.
 *
 * The shards are unequal on purpose, their shares spread evenly over one octave (the
 * largest holds twice the smallest). A Map rehashes when its size crosses a power of two
 * (it shrinks once it falls below a quarter of its capacity), and equal shards cross
 * together, all within a moment of a drain; shards whose sizes cover an octave cross those
 * thresholds at points spread over a quarter of the drain instead (ADR 0019).
 *
 * The shard comes from a hash of five characters of the id (its last four and its middle
 * one) and its length: generated ids end in a counter and user ids such as `order-1234`
 * mostly in digits, so those characters spread both.
 */
export class IdMap<V> {
  private readonly shards: Map<string, V>[] = Array.from({ length: SHARDS }, () => new Map<string, V>());

  get size(): number {
    let size = 0;
    for (const shard of this.shards) size += shard.size;
    return size;
  }

  get(id: string): V | undefined {
    return this.shardOf(id).get(id);
  }

  set(id: string, value: V): void {
    this.shardOf(id).set(id, value);
  }

  delete(id: string): boolean {
    return this.shardOf(id).delete(id);
  }

  private shardOf(id: string): Map<string, V> {
    // FNV-1a over the last four characters and the middle one, then a final mix. charCodeAt
    // past the start is NaN, which `^` treats as 0: short ids have a slot too.
    const n = id.length;
    let h = Math.imul(0x811c9dc5 ^ n, 0x01000193);
    h = Math.imul(h ^ id.charCodeAt(n - 1), 0x01000193);
    h = Math.imul(h ^ id.charCodeAt(n - 2), 0x01000193);
    h = Math.imul(h ^ id.charCodeAt(n - 3), 0x01000193);
    h = Math.imul(h ^ id.charCodeAt(n - 4), 0x01000193);
    h = Math.imul(h ^ id.charCodeAt(n >> 1), 0x01000193);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    return this.shards[SHARD_OF_SLOT[(h ^ (h >>> 12)) & (SLOTS - 1)]!]!;
  }
}

/** Small enough Maps that no one rehash stalls a delivery window (ADR 0019). */
const SHARDS = 256;
const SLOTS = 4096;

/** Slot -> shard: shard k owns a share of the slots proportional to 2^(k/256). */
const SHARD_OF_SLOT: Uint16Array = (() => {
  const table = new Uint16Array(SLOTS);
  for (let shard = 0; shard < SHARDS; shard++) {
    const from = Math.round(SLOTS * (2 ** (shard / SHARDS) - 1));
    const to = Math.round(SLOTS * (2 ** ((shard + 1) / SHARDS) - 1));
    table.fill(shard, from, to);
  }
  return table;
})();
