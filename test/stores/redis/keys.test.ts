/**
 * Every script runs on the keys of one shard, and so in one hash slot: proved here by
 * calling each typed wrapper with a recording client and hashing the keys it passes.
 */
import { RedisEventLog } from '../../../src/stores/redis/event-log.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ackScript, cancelScript, deferScript, expireScript, loadDueScript, nackScript, purgeScript, purgeTopicScript, rescheduleScript, reserveScript, retryDeadScript, cancelDeadScript, extendScript, quarantineScript, scheduleScript, reservedOfScript } from '../../../src/stores/redis/commands.js';
import { heartbeatScript, leaseAcquireScript, leaseReleaseScript, leaseRenewScript, promoteScript, releaseScript, reserveReadyScript } from '../../../src/stores/redis/dispatch-commands.js';
import { unparkScript, parkedInitScript, dueReadParkedScript, dueReadDelayedScript } from '../../../src/stores/redis/parking-commands.js';
import { swapScheduleScript, putNewSchedulesScript, putSchedulesScript, deleteScheduleScript } from '../../../src/stores/redis/schedule-commands.js';
import type { RedisClient } from '../../../src/stores/redis/connection.js';
import { RedisFlowState } from '../../../src/stores/redis/topic-limits.js';
import { buildKeyspace, SLOTS } from '../../../src/stores/redis/keys.js';
import { keySlot } from '../../../src/stores/redis/slot.js';
import { SCRIPT_NAMES, scripts } from '../../../src/stores/redis/scripts.js';

interface Call {
  readonly keys: string[];
}

function recordingClient(calls: Call[]): RedisClient {
  const record = (_script: string, numKeys: number, ...rest: (string | number)[]): Promise<unknown> => {
    calls.push({ keys: rest.slice(0, numKeys).map(String) });
    return Promise.resolve([]);
  };
  return { evalsha: record, eval: record } as unknown as RedisClient;
}

describe('redis keys', () => {
  it('computes the same slots as Redis Cluster (CRC16/XMODEM mod 16384)', () => {
    // Vectors from the Redis Cluster specification and CLUSTER KEYSLOT.
    assert.equal(keySlot('123456789'), 0x31c3);
    assert.equal(keySlot('foo'), 12182);
    assert.equal(keySlot('bar'), 5061);
    assert.equal(keySlot('{user1000}.following'), keySlot('{user1000}.followers'));
  });

  it('puts every key a script touches in one slot', async () => {
    const keys = buildKeyspace('slot-test', 16);
    const calls: Call[] = [];
    const client = recordingClient(calls);
    // The four schedule-* scripts touch the meta slot's schedule keys only, heartbeat its
    // members keys, the three flow-* scripts a topic's own keys and events-append the events'
    // keys: checked below; due-read is called in both its modes.
    const expected = SCRIPT_NAMES.length - 4 - 1 - 3 - 1 + 1;
    for (const shard of keys.shards) {
      calls.length = 0;
      const task = { id: 'a', topic: 'orders', body: 'p,0,1,1,1,1:2:3:0,0,,,1,,orders,|{}', runAt: 1, seq: 1, parkBucket: null };
      const far = { ...task, id: 'b', runAt: 2 ** 40, parkBucket: 2 ** 20 };
      await scheduleScript(client, shard, 0, [task, far, { ...far, id: 'c', parkBucket: 2 ** 20 + 1 }], 2);
      await unparkScript(client, shard, 7, [3, 5, 6], 100);
      await cancelScript(client, shard, 0, ['a']);
      await rescheduleScript(client, shard, 0, 'a', 5);
      await reserveScript(client, shard, 0, ['a', 'b'], undefined, 'n');
      await ackScript(client, shard, 0, [{ id: 'a', receipt: 'r' }]);
      await nackScript(client, shard, 0, 'a', 'r', { delayMs: undefined, random: 0, error: null, outcome: 'nacked' });
      await expireScript(client, shard, 0, 'a', 'r');
      await extendScript(client, shard, 0, [{ id: 'a', receipt: 'r', ttrMs: 5 }]);
      await reservedOfScript(client, shard, 0, 10, 'orders');
      await deferScript(client, shard, 0, 'a', 'r', 9);
      await retryDeadScript(client, shard, 0, 'a', 1);
      await cancelDeadScript(client, shard, 0, 'a');
      await quarantineScript(client, shard, 0, [{ id: 'a', receipt: null, error: 'UNDECODABLE_ROW: x' }]);
      await purgeScript(client, shard, 0, 10);
      await purgeTopicScript(client, shard, '0', 10, 'orders', 'p');
      await loadDueScript(client, shard, 10, null, 10);
      await parkedInitScript(client, shard);
      await dueReadParkedScript(client, shard, 3, 0, 10, 'orders');
      await dueReadDelayedScript(client, shard, 0, 10, 0, 10, 'orders');
      await promoteScript(client, shard, {
        leaseValue: 'owner:1',
        now: 0,
        entries: [
          { id: 'a', topic: 'orders' },
          { id: 'b', topic: 'mail' },
        ],
        channelOf: (topic) => keys.readyChannel(topic),
        message: '0 owner',
        reserveFor: () => 1,
        nonce: 'n',
      });
      await reserveReadyScript(client, shard, 'orders', 0, 10, undefined, 'n', true);
      await releaseScript(client, shard, 'orders', 0, keys.readyChannel('orders'), '0 owner', [{ id: 'a', receipt: 'r' }]);
      await leaseAcquireScript(client, shard, 'owner', 5_000);
      await leaseRenewScript(client, shard, 'owner:1', 5_000);
      await leaseReleaseScript(client, shard, 'owner:1');
      assert.equal(calls.length, expected, 'one call per script');
      const slot = keySlot(shard.pool);
      for (const call of calls) {
        assert.ok(call.keys.length > 0);
        for (const key of call.keys) assert.equal(keySlot(key), slot, `${key} is in the slot of its shard`);
      }
    }
  });

  it('keeps the schedules hash and its version in the meta slot, the keys schedule-swap touches', async () => {
    const keys = buildKeyspace('slot-test', 16);
    const calls: Call[] = [];
    await swapScheduleScript(recordingClient(calls), keys, true, [['s', 'a', 'b']]);
    await putNewSchedulesScript(recordingClient(calls), keys, [['s', 'a']]);
    await putSchedulesScript(recordingClient(calls), keys, [['s', 'a']]);
    await deleteScheduleScript(recordingClient(calls), keys, 's');
    assert.deepEqual(calls.map((c) => c.keys), Array.from({ length: 4 }, () => [keys.schedules, keys.schedulesVersion]));
    assert.equal(keySlot(keys.schedules), keySlot(keys.meta));
    assert.equal(keySlot(keys.schedulesVersion), keySlot(keys.meta));
    assert.equal(keySlot(keys.schedules), keySlot(keys.push));
  });

  it('keeps the heartbeats and the join times in the meta slot, the keys heartbeat touches', async () => {
    const keys = buildKeyspace('slot-test', 16);
    const calls: Call[] = [];
    await heartbeatScript(recordingClient(calls), keys, 'owner', 0, 4_000);
    assert.deepEqual(calls.map((c) => c.keys), [[keys.members, keys.joined]]);
    assert.equal(keySlot(keys.members), keySlot(keys.meta));
    assert.equal(keySlot(keys.joined), keySlot(keys.meta));
    assert.notEqual(keys.joined, keys.members);
  });

  it("keeps a topic's flow keys under the topic's own hash tag, the keys flow-admit, flow-bind and flow-hold touch", async () => {
    const keys = buildKeyspace('slot-test', 16);
    const calls: Call[] = [];
    const flow = new RedisFlowState(recordingClient(calls), keys);
    const limits = { rate: 10, periodMs: 1_000, burst: 5, concurrency: 2 };
    for (const topic of ['orders', 'mail:eu']) {
      calls.length = 0;
      await flow.admit({ topic, limits, want: 3, holder: 'h', holdUntil: 10, now: 0 }).catch(() => undefined);
      await flow.bind({ topic, limits, holder: 'h', unused: 1, leases: [{ key: 'a', until: 9 }], now: 1 });
      await flow.hold(topic, [{ key: 'a', until: 19 }]);
      const { bucket, slots } = keys.flowKeys(topic);
      assert.deepEqual(calls.map((c) => c.keys), [[bucket, slots], [bucket, slots], [slots]]);
      assert.equal(keySlot(bucket), keySlot(slots));
    }
    assert.notEqual(keys.flowKeys('orders').bucket, keys.flowKeys('mail:eu').bucket);
  });

  it("keeps the events' stream and its count under a hash tag of their own, the keys events-append touches", async () => {
    const keys = buildKeyspace('slot-test', 16);
    const calls: Call[] = [];
    await new RedisEventLog(recordingClient(calls), keys, 10).append([{ type: 'acked', id: 'a', topic: 't', attempt: 1, at: 1 }]);
    assert.deepEqual(calls.map((c) => c.keys), [[keys.events, keys.eventsCount]]);
    assert.equal(keySlot(keys.events), keySlot(keys.eventsCount));
    assert.notEqual(keySlot(keys.events), keySlot(keys.meta));
  });

  it('spreads the shards of a namespace evenly over the slot space', () => {
    for (const shards of [1, 3, 16, 64]) {
      const keys = buildKeyspace('spread', shards);
      keys.shards.forEach((shard, i) => {
        const slot = keySlot(shard.pool);
        assert.ok(slot >= Math.floor((i * SLOTS) / shards) && slot < Math.floor(((i + 1) * SLOTS) / shards), `shard ${i} of ${shards}`);
      });
    }
  });

  it('gives different namespaces disjoint keys', () => {
    const a = buildKeyspace('a', 4);
    const b = buildKeyspace('b', 4);
    const all = (k: typeof a): string[] => [k.meta, k.push, ...k.shards.flatMap((s) => [s.pool, s.delayed, s.reserved, s.dead, s.done, s.counts, s.lease])];
    const overlap = all(a).filter((key) => all(b).includes(key));
    assert.deepEqual(overlap, []);
  });

  it('keeps the push subscriptions in one hash of the meta slot, apart from every shard key', () => {
    const keys = buildKeyspace('tenant-a', 16);
    assert.equal(keys.push, 'tenant-a:{tenant-a/meta}:push');
    assert.equal(keySlot(keys.push), keySlot(keys.meta));
    const shardKeys = keys.shards.flatMap((s) => [s.pool, s.delayed, s.reserved, s.dead, s.done, s.counts, s.lease, s.fence, s.parkFrom, s.parked, s.parkedCounts]);
    assert.ok(!shardKeys.includes(keys.push) && keys.push !== keys.meta && keys.push !== keys.members);
  });

  it('inlines the Lua includes and documents KEYS, ARGV and returns in each script header', () => {
    for (const [name, script] of scripts()) {
      assert.ok(!/^--\s*@include/m.test(script.source), `${name}: includes resolved`);
      assert.match(script.source, /KEYS/, `${name}: header lists KEYS`);
      assert.match(script.source, /ARGV/, `${name}: header lists ARGV`);
      assert.match(script.source, /Returns:/, `${name}: header lists the returns`);
      assert.ok(!/redis\.call\('TIME'/i.test(script.source), `${name}: never reads the clock`);
    }
  });
});
