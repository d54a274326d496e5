// The remote timers over the Redis timer backend (src/stores/redis/timer-backend.ts) on a
// real redis-server of the test's own: timers published on the timers channel and heard by
// each view's own subscriber (subscriber.ts), shards read by load-due.lua after their
// parked tasks are moved back (prepareShard), timers written by a real store's schedule
// (src/testing/remote-timer-conformance.ts; the same suite runs in memory and on PostgreSQL).
import { Redis } from 'ioredis';
import { silentLogger } from '../../../src/core/logger.js';
import type { TaskStore } from '../../../src/core/ports/index.js';
import { NoticeGuard } from '../../../src/coordination/notices.js';
import { openRedisStore } from '../../../src/stores/redis/index.js';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { Unparker } from '../../../src/stores/redis/parking.js';
import { Subscriber } from '../../../src/stores/redis/subscriber.js';
import { redisTimerBackend } from '../../../src/stores/redis/timer-backend.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runRemoteTimerConformance } from '../../../src/testing/remote-timer-conformance.js';
import { task } from '../../../src/testing/store-conformance/index.js';
import { redisSkip, startRedis } from '../../helpers/redis-servers.js';

redisSkip();

runRemoteTimerConformance('redis', async () => {
  const server = await startRedis();
  const prefix = 'timers';
  // The producer: a real store writes the timers (schedule.lua, parking those far ahead of
  // the `now` it is given); its clock is the system's, years before the suite's timers.
  const store: TaskStore = await openRedisStore(server.url, { clock: storeSystemClock, prefix, shards: 16 });
  const keys = buildKeyspace(prefix, 16);
  const clients: Redis[] = [];
  const subscribers: Subscriber[] = [];
  const connection = async (): Promise<Redis> => {
    const client = new Redis(server.url, { maxRetriesPerRequest: 1, lazyConnect: true });
    clients.push(client);
    await client.connect();
    return client;
  };
  const sender = await connection();
  return {
    async backend(receive) {
      const client = await connection();
      const guard = new NoticeGuard('redis', ['ready'], silentLogger, storeSystemClock);
      subscribers.push(await Subscriber.open(client, keys, guard, { ready: () => undefined, timers: receive, reconnected: () => undefined }));
      return redisTimerBackend(client, keys, new Unparker(client, keys.shards));
    },
    delivers: true,
    async seed(timers, writtenAt) {
      // In calls of 1,000, as a producer's batches would come.
      for (let at = 0; at < timers.length; at += 1_000)
        await store.tasks.schedule(timers.slice(at, at + 1_000).map(({ id, topic, dueAt }) => task(id, { topic, runAt: dueAt })), writtenAt);
    },
    send: async (message) => void (await sender.publish(keys.timerChannel, message)),
    async close() {
      for (const subscriber of subscribers) await subscriber.close();
      for (const client of clients) client.disconnect();
      await store.close();
      await server.stop();
      server.remove();
    },
  };
});
