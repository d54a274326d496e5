// Lifecycle events on a 3-master Redis Cluster: the stream and its count under one hash tag,
// written by one script, read by every process.
import { after, before, describe } from 'node:test';
import { randomBytes } from 'node:crypto';
import { Cluster } from 'ioredis';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { sharedEventsTests } from '../../helpers/events.js';
import { redisSkip, startCluster, type RedisCluster } from '../../helpers/redis-servers.js';

const skip = redisSkip();

describe('lifecycle events on a Redis Cluster', { skip }, () => {
  let cluster: RedisCluster | undefined;
  let admin: Cluster | undefined;
  before(async () => {
    cluster = await startCluster(3);
    admin = new Cluster(cluster.servers.slice(0, 3).map((s) => ({ host: '127.0.0.1', port: s.port })));
  });
  after(async () => {
    await admin?.quit();
    await cluster?.stop();
  });

  sharedEventsTests(async () => {
    const prefix = `ev${randomBytes(4).toString('hex')}`;
    const stream = buildKeyspace(prefix, 16).events;
    return {
      url: `${cluster!.url}?prefix=${prefix}`,
      async writeGarbage() {
        await admin!.xadd(stream, '*', 'e', 'not json');
        await admin!.xadd(stream, '*', 'n', '1', 'e', JSON.stringify([{ type: 'acked', id: 'x', topic: 't', attempt: 1, at: -5 }]));
        return 2;
      },
      cleanup: async () => undefined,
    };
  });
});
