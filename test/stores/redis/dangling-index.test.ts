/**
 * An index entry whose task body is gone (left by a bug or a hand edit) must not end a page
 * of load-due.lua early: a page that comes back short tells its readers (the engine's loads,
 * a taken-over shard's load in remote-timers.ts) that nothing follows, and the timers after
 * it in that page's range were not loaded until a later read. The entries are skipped without
 * counting.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { loadDueScript } from '../../../src/stores/redis/commands.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { task } from '../../../src/testing/store-conformance/index.js';
import { redisSkip, startRedis, type RedisServer } from '../../helpers/redis-servers.js';

const skip = redisSkip();

describe('redis: load-due.lua over index entries whose body is gone', { skip }, () => {
  let server: RedisServer;
  before(async () => {
    server = await startRedis();
  });
  after(async () => {
    await server.stop();
    server.remove();
  });

  it('a page holds `limit` timers past the dangling entries, and paging reads every timer once', async () => {
    const prefix = 'dangling';
    const store = await openRedisStore(server.url, { clock: storeSystemClock, prefix, shards: 1 });
    const client = new Redis(server.url);
    try {
      const now = Date.now();
      // Due within the hour: in the delayed index, not parked.
      const ids = Array.from({ length: 30 }, (_, i) => `t${String(i).padStart(2, '0')}`);
      await store.tasks.schedule(ids.map((id, i) => task(id, { runAt: now + 1_000 + i })), now);
      const shard = buildKeyspace(prefix, 1).shards[0]!;
      // The first 12 lose their bodies: more than a page of 5, twice over.
      const gone = ids.slice(0, 12);
      await client.hdel(shard.pool, ...gone);
      const kept = ids.slice(12);

      const first = await loadDueScript(client as never, shard, now + 60_000, null, 5);
      assert.deepEqual(first.map((e) => e.id), kept.slice(0, 5), 'a full page of the timers after the dangling entries');

      const read: string[] = [];
      let cursor: { dueAt: number; seq: number } | null = null;
      for (let page = 0; page < 20; page++) {
        const entries = await store.tasks.loadDue(now + 60_000, cursor, 5);
        read.push(...entries.map((e) => e.id));
        if (entries.length < 5) break;
        const last = entries[entries.length - 1]!;
        cursor = { dueAt: last.dueAt, seq: last.seq };
      }
      assert.deepEqual(read, kept, 'every timer with a body, once, in order');
    } finally {
      client.disconnect();
      await store.close();
    }
  });
});
