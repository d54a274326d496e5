import { isDelayQError, type DelayQError } from '../core/errors.js';
import { PartialBatchError } from '../core/partial-batch.js';

/**
 * Task id -> shard: FNV-1a (32 bit) of the id, mod the shard count. Stable across
 * processes and versions (changing it would strand every stored task), so get, cancel and
 * ack by id go straight to one shard.
 */
export function shardOf(id: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < id.length; i++) {
    hash ^= id.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** Groups items by the shard of their id, keeping input order within each group. */
export function groupByShard<T>(items: readonly T[], idOf: (item: T) => string, shards: number): Map<number, T[]> {
  const groups = new Map<number, T[]>();
  for (const item of items) {
    const shard = shardOf(idOf(item), shards);
    let group = groups.get(shard);
    if (!group) groups.set(shard, (group = []));
    group.push(item);
  }
  return groups;
}

/**
 * Batch operations of a sharded store: `items` grouped by the shard of their id, `call`
 * once per shard and chunk of `chunkSize` (a shard's chunks in turn, shards in parallel);
 * each chunk's outputs land at its items' places, so the result is in input order.
 *
 * A shard that fails holds back only its own items: the other shards' calls run to the
 * end, and when every failure says the store could not do it (STORE_UNAVAILABLE), the call
 * rejects with a PartialBatchError that keeps the outcomes of the items that were done. Any
 * other error is rethrown as it is.
 */
export async function mapByShard<T extends string | { readonly id: string }, O>(
  items: readonly T[],
  shards: number,
  chunkSize: number,
  call: (shard: number, chunk: T[]) => Promise<readonly O[]>,
): Promise<O[]> {
  // Filled, not sparse: an item whose shard failed reads undefined to map and flatMap too.
  const out = Array.from<O | undefined>({ length: items.length });
  const idOf = (i: number): string => {
    const item = items[i]!;
    return typeof item === 'string' ? item : item.id;
  };
  const failures: { shard: number; error: unknown }[] = [];
  await Promise.all(
    [...groupByShard(items.map((_, i) => i), idOf, shards)].map(async ([shard, group]) => {
      try {
        for (let from = 0; from < group.length; from += chunkSize) {
          const slice = group.slice(from, from + chunkSize);
          const outputs = await call(shard, slice.map((i) => items[i]!));
          slice.forEach((i, k) => (out[i] = outputs[k]!));
        }
      } catch (error) {
        failures.push({ shard, error });
      }
    }),
  );
  if (failures.length === 0) return out as O[];
  const unexpected = failures.find((f) => !isDelayQError(f.error, 'STORE_UNAVAILABLE'));
  if (unexpected !== undefined) throw unexpected.error;
  throw new PartialBatchError(out, failures.map((f) => f.shard).sort((a, b) => a - b), failures[0]!.error as DelayQError);
}
