/**
 * How the Redis store's commands leave the process, against a real redis-server: the
 * script calls issued in one tick go out in one write, and every reservation call gets a
 * receipt nonce of its own.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import type { NewTaskRecord } from '../../../src/core/task/model.js';
import { encodeNewTask } from '../../../src/stores/redis/codec.js';
import { scheduleScript } from '../../../src/stores/redis/commands.js';
import { connect, parseRedisUrl, type RedisClient } from '../../../src/stores/redis/connection.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { nextNonce } from '../../../src/stores/shared/nonce.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();

const task = (id: string, noteLength = 0): NewTaskRecord => ({ id, topic: 'a', payload: JSON.stringify({ order: id, note: 'x'.repeat(noteLength) }), runAt: 5_000, maxAttempts: 1, ttrMs: 1_000, backoff: DEFAULT_BACKOFF });

/** Counts the writes the socket hands to the kernel (a corked socket hands several chunks to one writev). */
function countWrites(socket: Socket): { readonly writes: number; readonly chunks: number } {
  const counts = { writes: 0, chunks: 0 };
  const internals = socket as unknown as {
    _write: (chunk: unknown, encoding: string, cb: () => void) => void;
    _writev: (chunks: unknown[], cb: () => void) => void;
  };
  const write = internals._write.bind(socket);
  const writev = internals._writev.bind(socket);
  internals._write = (chunk, encoding, cb) => {
    counts.writes += 1;
    counts.chunks += 1;
    write(chunk, encoding, cb);
  };
  internals._writev = (chunks, cb) => {
    counts.writes += 1;
    counts.chunks += chunks.length;
    writev(chunks, cb);
  };
  return counts;
}

describe('redis store writes', { skip }, () => {
  let server: RedisServer;
  let client: RedisClient;

  before(async () => {
    server = await startRedis();
    client = connect(parseRedisUrl(server.url), 0);
    await client.ping();
  });
  after(async () => {
    client.disconnect();
    await server.stop();
    server.remove();
  });

  it('sends the small script calls issued in one tick in one write, and a large one at once', async () => {
    const keys = buildKeyspace('writes', 16);
    await client.script('FLUSH'); // the first calls fall back from EVALSHA to EVAL
    const counts = countWrites((client as unknown as { stream: Socket }).stream);
    const scheduleAll = (round: number, perShard: number) =>
      Promise.all(
        keys.shards.map((shard, i) => {
          const tasks = Array.from({ length: perShard }, (_, j) => {
            const t = task(`r${round}.${i}.${j}`, perShard > 1 ? 80 : 0);
            return { id: t.id, topic: t.topic, body: encodeNewTask(t, j, 1_000), runAt: t.runAt, seq: j, parkBucket: null };
          });
          return scheduleScript(client, shard, 1_000, tasks, 0);
        }),
      );
    // Through the NOSCRIPT fallback: every call still reaches Redis.
    await scheduleAll(0, 1);
    let before = { ...counts };
    // Small calls (one task each, ~400 bytes): the 16 EVALSHAs of the tick leave together.
    await scheduleAll(1, 1);
    assert.equal(counts.chunks - before.chunks >= 16, true);
    assert.equal(counts.writes - before.writes, 1, `small calls: ${counts.writes - before.writes} writes`);
    // Large calls (60 tasks each, over 8 KiB): each leaves as soon as it is issued, so Redis
    // works on it while the next one is encoded.
    before = { ...counts };
    await scheduleAll(2, 60);
    assert.equal(counts.writes - before.writes, 16, `large calls: ${counts.writes - before.writes} writes`);
    for (const shard of keys.shards) assert.equal(await client.zcard(shard.delayed), 62, `shard ${shard.index}`);
  });

  it('writes the seq of a ZSET member as 7 bytes big-endian, so that ties sort by seq, up to 2^53', async () => {
    const patch = readFileSync(new URL('../../../src/stores/redis/lua/includes/patch.lua', import.meta.url), 'utf8');
    const values = [0, 1, 255, 256, 65_535, 2 ** 32 - 1, 2 ** 32 + 5, 2 ** 48 + 7, 2 ** 53 - 1];
    const script = `${patch}\nlocal out = {}\nfor i = 1, #ARGV do out[i] = seqBytes(tonumber(ARGV[i])) end\nreturn out`;
    const replies = (await client.callBuffer('EVAL', script, 0, ...values)) as Buffer[];
    values.forEach((value, i) => {
      const expected = Buffer.alloc(8);
      expected.writeBigUInt64BE(BigInt(value));
      assert.deepEqual(replies[i], expected.subarray(1), `seq ${value}`);
    });
    // Sorted as bytes, the members sort as numbers.
    const sorted = [...replies].sort((a, b) => Buffer.compare(a, b));
    assert.deepEqual(sorted, replies);
  });

  it('gives every reservation call a nonce of its own, which no suffix can turn into another', () => {
    const nonces = Array.from({ length: 10_000 }, () => nextNonce());
    assert.equal(new Set(nonces).size, nonces.length);
    const prefix = nonces[0]!.slice(0, 8);
    for (const nonce of nonces) {
      assert.match(nonce, /^[A-Za-z0-9_-]{8}[0-9a-z]+-$/);
      assert.equal(nonce.slice(0, 8), prefix);
    }
    // Callers append "<n>." to a nonce: the '-' keeps "<nonce 1><1>." apart from "<nonce 11>.".
    const withSuffix = new Set(nonces.flatMap((n) => ['0', '1', '11'].map((s) => `${n}${s}.`)));
    assert.equal(withSuffix.size, nonces.length * 3);
  });
});
