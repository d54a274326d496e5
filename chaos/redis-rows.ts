/**
 * Where the checker's offending tasks stand in a Redis (Cluster) store, read while its
 * servers still run, so a loss can be told apart from a task still owed:
 *
 *   no body                     the acknowledged schedule is not in the store: a real loss
 *   completed                   delivered and acked: the delivery happened, its fact is missing
 *   pending, in delayed         owed: some owner's wheel must promote it (in a ready list or not)
 *   reserved, in reserved       owed: its reservation must run out and be expired
 *
 * with the shard's lease (holder and time left) and whether the task's topic's ready list
 * names it.
 */
import { Cluster, Redis } from 'ioredis';
import { decodeTask } from '../src/stores/redis/codec.js';
import { buildKeyspace } from '../src/stores/redis/keys.js';
import { shardOf } from '../src/coordination/router.js';

/** The members of `delayed` and `reserved`: a 7-byte seq, then the id (task-inspection.ts). */
const SEQ_BYTES = 7;

export interface RedisStanding {
  readonly id: string;
  readonly reading: string;
}

export async function redisStandings(nodes: readonly { host: string; port: number }[], cluster: boolean, prefix: string, shards: number, ids: readonly string[]): Promise<RedisStanding[]> {
  const client = cluster ? new Cluster([...nodes], { enableOfflineQueue: true }) : new Redis(nodes[0]!);
  const keys = buildKeyspace(prefix, shards);
  try {
    const out: RedisStanding[] = [];
    for (const id of ids) {
      const shardIndex = shardOf(id, shards);
      const shard = keys.shards[shardIndex]!;
      const body = await client.hget(shard.pool, id);
      const [lease, leaseTtl] = await Promise.all([client.get(shard.lease), client.pttl(shard.lease)]);
      const where = `shard ${shardIndex}, lease ${lease ?? '-'} (${leaseTtl} ms left)`;
      if (body === null) {
        out.push({ id, reading: `no body; ${where}` });
        continue;
      }
      const record = decodeTask(id, body).record;
      const index = async (key: string): Promise<string> => {
        const flat = await client.zrangeBuffer(key, 0, -1, 'WITHSCORES');
        for (let i = 0; i + 1 < flat.length; i += 2) if (flat[i]!.subarray(SEQ_BYTES).toString() === id) return flat[i + 1]!.toString();
        return '-';
      };
      const [delayed, reserved, ready] = await Promise.all([index(shard.delayed), index(shard.reserved), client.lrange(shard.ready(record.topic), 0, -1)]);
      out.push({
        id,
        reading:
          `${record.state}, attempts ${record.attempts}, runAt ${record.runAt}, reservedUntil ${record.reservedUntil ?? '-'}, receipt ${record.receipt ?? '-'}, updatedAt ${record.updatedAt}; ` +
          `delayed score ${delayed}, reserved score ${reserved}, in its ready list ${ready.filter((r) => r === id).length}x (of ${ready.length}); ${where}`,
      });
    }
    return out;
  } finally {
    client.disconnect();
  }
}
