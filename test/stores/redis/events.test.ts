import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import type { TaskEvent } from '../../../src/core/events.js';
import { RedisEventLog } from '../../../src/stores/redis/event-log.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { sharedEventsTests } from '../../helpers/events.js';
import { redisForSuite } from '../../helpers/redis-suite.js';

const event = (i: number): TaskEvent => ({ type: 'acked', id: `t${i}`, topic: 't', attempt: 1, at: i });

describe('lifecycle events on Redis', () => {
  const redis = redisForSuite();
  sharedEventsTests(async () => {
    const prefix = `ev${randomBytes(4).toString('hex')}`;
    const stream = buildKeyspace(prefix, 1).events;
    return {
      url: `${redis.server.url}?prefix=${prefix}`,
      async writeGarbage() {
        await redis.admin.xadd(stream, '*', 'e', 'not json');
        await redis.admin.xadd(stream, '*', 'n', '1', 'e', JSON.stringify([{ type: 'acked', id: 'x', topic: 't', attempt: 1, at: -5 }]));
        await redis.admin.xadd(stream, '*', 'other', '{}');
        await redis.admin.xadd(stream, '*', 'n', 'x', 'e', JSON.stringify([{ type: '__proto__', id: 'x', topic: 't', attempt: 1, at: 5 }, 'str']));
        return 5;
      },
      cleanup: async () => undefined,
    };
  });

  it('one stream entry per batch, trimmed to the newest `retain` events; a reader resumes inside an entry, and one behind the trim starts at the oldest kept', async () => {
    const keys = buildKeyspace(`ev${randomBytes(4).toString('hex')}`, 1);
    const log = new RedisEventLog(redis.admin, keys, 10);
    await log.append([event(0), event(1), event(2), event(3)]);
    const first = await log.read(null, 100);
    assert.deepEqual(first.events.map((e) => e.id), ['t0', 't1', 't2', 't3']);
    assert.equal(await redis.admin.xlen(keys.events), 1);
    // Resume inside the entry, a page of 2 at a time.
    const page = await log.read(first.events[0]!.eventId, 2);
    assert.deepEqual([page.events.map((e) => e.id), page.more], [['t1', 't2'], true]);
    assert.deepEqual((await log.read(page.last, 2)).events.map((e) => e.id), ['t3']);
    for (let b = 1; b <= 4; b++) await log.append([event(b * 10), event(b * 10 + 1), event(b * 10 + 2), event(b * 10 + 3)]);
    // 20 written, 10 kept at least: the oldest entries went while 10 remain without them.
    assert.equal(Number(await redis.admin.get(keys.eventsCount)), 12);
    assert.equal(await redis.admin.xlen(keys.events), 3);
    const behind = await log.read(first.events[0]!.eventId, 100);
    assert.deepEqual(behind.events.map((e) => e.id), ['t20', 't21', 't22', 't23', 't30', 't31', 't32', 't33', 't40', 't41', 't42', 't43']);
    assert.equal(await log.latest(), behind.last);
    assert.equal(log.parseId('1-0'), null);
    assert.equal(log.parseId(behind.last!), behind.last);
  });
});
