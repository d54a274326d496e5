/**
 * loadDue across shards: a k-way merge by (dueAt, seq) of each shard's sorted timers.
 *
 * Seqs are global (one counter per namespace, taken in input order by schedule), so the
 * merged order is the insertion order on ties, and a cursor (dueAt, seq) means the same
 * position in every shard. Each shard is read lazily in chunks: a page needs at most
 * `limit` timers from all shards together, and a shard whose chunk runs out is read
 * again from its own last entry, so a page is exact (never short while timers remain).
 */
import type { DueCursor } from '../../core/ports/index.js';

export type ShardReader<E extends DueCursor> = (shard: number, after: DueCursor | null, limit: number) => Promise<E[]>;

interface Stream<E extends DueCursor> {
  readonly shard: number;
  buffer: E[];
  head: number;
  exhausted: boolean;
  after: DueCursor | null;
}

const before = (a: DueCursor, b: DueCursor): boolean => a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq);

export async function mergeDue<E extends DueCursor>(shards: readonly number[], after: DueCursor | null, limit: number, read: ShardReader<E>): Promise<E[]> {
  if (limit <= 0 || shards.length === 0) return [];
  // First chunk: a fair share plus slack, so an even spread needs one round trip per shard.
  const chunk = Math.min(limit, Math.max(64, Math.ceil((limit / shards.length) * 1.5)));
  const streams: Stream<E>[] = shards.map((shard) => ({ shard, buffer: [], head: 0, exhausted: false, after }));
  const refill = async (s: Stream<E>, size: number): Promise<void> => {
    const page = await read(s.shard, s.after, size);
    s.buffer = page;
    s.head = 0;
    s.exhausted = page.length < size;
    const last = page[page.length - 1];
    if (last) s.after = { dueAt: last.dueAt, seq: last.seq };
  };
  await Promise.all(streams.map((s) => refill(s, chunk)));
  const out: E[] = [];
  while (out.length < limit) {
    let best: Stream<E> | null = null;
    for (const s of streams) {
      if (s.head >= s.buffer.length) {
        if (s.exhausted) continue;
        await refill(s, Math.min(limit, Math.max(chunk, limit - out.length)));
        if (s.head >= s.buffer.length) continue;
      }
      if (best === null || before(s.buffer[s.head]!, best.buffer[best.head]!)) best = s;
    }
    if (best === null) break;
    out.push(best.buffer[best.head++]!);
  }
  return out;
}
