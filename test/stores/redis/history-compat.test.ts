/**
 * Bodies written by the version before attempt history (field 13 is errLen alone, no
 * history between the error and the payload) are settled by this version's scripts: the
 * first entry is appended, the error and the payload read as before (ADR 0041).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { ackScript, nackScript } from '../../../src/stores/redis/commands.js';
import { decodeTask } from '../../../src/stores/redis/codec.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();
const T0 = Date.UTC(2030, 0, 1);
const b36 = (n: number): string => n.toString(36);

/** A reserved task as the previous version's nack.lua and reserve left it: attempt `attempts`, reserved at `at`, error 'boom'. */
function previousVersionBody(attempts: number, at: number, receipt: string): string {
  return `r,${b36(attempts)},${b36(T0)},5,${b36(30_000)},,${b36(T0 - 1_000)},${b36(at)},${b36(at + 30_000)},1,${receipt},orders,4|boom{"a":"|,:"}`;
}

describe('redis: settling a body of the version before attempt history', { skip }, () => {
  let server: RedisServer;
  let client: Redis;
  const shard = buildKeyspace('hc', 1).shards[0]!;

  before(async () => {
    server = await startRedis();
    client = new Redis(server.url);
  });
  after(async () => {
    client.disconnect();
    await server.stop();
    server.remove();
  });

  it('a nack appends the first entry, replaces the error, keeps the payload', async () => {
    await client.hset(shard.pool, 'n1', previousVersionBody(2, T0 + 100, '2.x'));
    const reply = await nackScript(client, shard, T0 + 350, 'n1', '2.x', { delayMs: 0, random: 0, error: 'again, | 2', outcome: 'push:5xx' });
    assert.equal(reply.status, 'retrying');
    const { record } = decodeTask('n1', (await client.hget(shard.pool, 'n1'))!);
    assert.deepEqual([record.state, record.lastError, record.payload, record.attempts], ['pending', 'again, | 2', '{"a":"|,:"}', 2]);
    assert.deepEqual(record.history, [{ attempt: 2, startedAt: T0 + 100, durationMs: 250, outcome: 'push:5xx', error: 'again, | 2' }]);
  });

  it('an ack appends the acked entry, keeps the old error and the payload', async () => {
    await client.hset(shard.pool, 'a1', previousVersionBody(3, T0 + 200, '3.y'));
    assert.deepEqual(await ackScript(client, shard, T0 + 207, [{ id: 'a1', receipt: '3.y' }]), [{ status: 'acked', topic: 'orders' }]);
    const { record } = decodeTask('a1', (await client.hget(shard.pool, 'a1'))!);
    assert.deepEqual([record.state, record.lastError, record.payload], ['completed', 'boom', '{"a":"|,:"}']);
    assert.deepEqual(record.history, [{ attempt: 3, startedAt: T0 + 200, durationMs: 7, outcome: 'acked', error: null }]);
  });
});
