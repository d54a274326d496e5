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
 */
export async function mapByShard<T extends string | { readonly id: string }, O>(
  items: readonly T[],
  shards: number,
  chunkSize: number,
  call: (shard: number, chunk: T[]) => Promise<readonly O[]>,
): Promise<O[]> {
  const out = new Array<O>(items.length);
  const idOf = (i: number): string => {
    const item = items[i]!;
    return typeof item === 'string' ? item : item.id;
  };
  await Promise.all(
    [...groupByShard(items.map((_, i) => i), idOf, shards)].map(async ([shard, group]) => {
      for (let from = 0; from < group.length; from += chunkSize) {
        const slice = group.slice(from, from + chunkSize);
        const outputs = await call(shard, slice.map((i) => items[i]!));
        slice.forEach((i, k) => (out[i] = outputs[k]!));
      }
    }),
  );
  return out;
}
