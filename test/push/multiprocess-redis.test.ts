/**
 * Two `delayq serve` processes on one private redis-server push each task once: a push
 * subscription to a loopback receiver for half the tasks, a per-task url (signed with the
 * processes' default secret) for the other half. Every webhook-id must arrive exactly once,
 * none before its runAt, and the two processes' counters must add up to one send per task.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { DelayQClient } from '../../src/client/index.js';
import { generateSecret } from '../../src/push/signature.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';
import { spawnServer, type SpawnedServer } from '../helpers/service-process.js';
import { startReceiver, type Receiver } from './receiver.js';

const skip = redisSkip();
const TASKS = 500;

describe('push from two processes on one Redis', { skip }, () => {
  let redis: RedisServer | undefined;
  let receiver: Receiver | undefined;
  const arrivedAt: number[] = [];

  before(async () => {
    redis = await startRedis();
    receiver = await startReceiver();
    const answer = receiver.answer;
    receiver.answer = (request, response) => {
      arrivedAt.push(Date.now());
      answer(request, response);
    };
  });

  after(async () => {
    await receiver?.close();
    await redis?.stop();
    redis?.remove();
  });

  it(`pushes each of ${TASKS} tasks once, at or after its runAt`, { timeout: 60_000 }, async () => {
    const secret = generateSecret();
    const store = `${redis!.url}?prefix=push2&shards=4`;
    const args = ['--store', store, '--push-allow', '127.0.0.1/32', '--push-secret', secret];
    const servers: SpawnedServer[] = await Promise.all([spawnServer(args), spawnServer(args)]);
    try {
      const [a, b] = servers.map((s) => new DelayQClient({ url: s.address }));
      const topicSecret = generateSecret();
      await a!.setPush('orders', { url: `${receiver!.url}/orders`, secret: topicSecret });
      // Both pushers read the subscription within pushSyncMs (1 s); the tasks fall due after it.
      const start = Date.now() + 2_500;
      const tasks = Array.from({ length: TASKS }, (_, i) => ({
        id: `t-${i}`,
        topic: i % 2 === 0 ? 'orders' : 'mail',
        payload: { i },
        runAt: start + (i % 100) * 10,
        ...(i % 2 === 1 ? { url: `${receiver!.url}/own` } : {}),
      }));
      // Half scheduled through each process.
      const results = [...(await a!.scheduleMany(tasks.slice(0, TASKS / 2))), ...(await b!.scheduleMany(tasks.slice(TASKS / 2)))];
      assert.equal(results.filter((r) => 'created' in r && r.created).length, TASKS);

      await receiver!.arrivals(TASKS);
      // Long enough for a second push of any task to show up.
      await new Promise((resolve) => setTimeout(resolve, 1_000));
      assert.equal(receiver!.received.length, TASKS, 'no task pushed twice');
      const ids = receiver!.received.map((r) => r.headers['webhook-id']);
      assert.equal(new Set(ids).size, TASKS, 'each webhook-id once');
      receiver!.received.forEach((r, k) => {
        const runAt = Number(r.headers['delayq-run-at']);
        assert.ok(arrivedAt[k]! >= runAt, `${String(r.headers['webhook-id'])} arrived ${runAt - arrivedAt[k]!} ms before its runAt`);
        const own = r.url === '/hook/own';
        assert.equal(r.headers['delayq-topic'], own ? 'mail' : 'orders');
        assert.doesNotThrow(() => new Webhook(own ? secret : topicSecret).verify(r.body, r.headers as Record<string, string>));
      });
      const stats = await Promise.all([a!.stats(), b!.stats()]);
      const sent = stats.map((s) => Object.values(s.push?.topics ?? {}).reduce((sum, c) => sum + c.sent, 0));
      assert.equal(sent[0]! + sent[1]!, TASKS, `one send per task in all (${sent.join(' + ')})`);
      for (const client of [a!, b!]) assert.equal((await client.stats()).counts.completed, TASKS);
    } finally {
      assert.deepEqual(await Promise.all(servers.map((s) => s.stop())), [0, 0]);
    }
  });
});
