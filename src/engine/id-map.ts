/**
 * A map keyed by task id, split over 64 small Maps. V8 rehashes a whole Map at once when
 * it grows or shrinks: at 65,536 entries that is a 5 ms stall (measured here; the driver's
 * map of timers crosses it every time a burst of 200,000 due tasks drains), inside a
 * window where tasks are due every millisecond. Split 64 ways, each rehash is 64 times
 * smaller; the total work is the same.
 *
 * The shard comes from two characters of the id (its last and its middle one): generated
 * ids end in a counter, so their last character alone spreads them evenly; user ids such
 * as `order-1234` still spread over ten shards or more.
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
    // charCodeAt past the end is NaN, and NaN & 63 is 0: the empty id has a shard too.
    return this.shards[(id.charCodeAt(id.length - 1) + 7 * id.charCodeAt(id.length >> 1)) & (SHARDS - 1)]!;
  }
}

const SHARDS = 64;
