import { describe } from 'node:test';
import { randomBytes } from 'node:crypto';
import { buildKeyspace } from '../../../src/stores/redis/keys.js';
import { sharedEventsTests } from '../../helpers/events.js';
import { redisForSuite } from '../../helpers/redis-suite.js';

describe('lifecycle events on Redis', () => {
  const redis = redisForSuite();
  sharedEventsTests(async () => {
    const prefix = `ev${randomBytes(4).toString('hex')}`;
    const stream = buildKeyspace(prefix, 1).events;
    return {
      url: `${redis.server.url}?prefix=${prefix}`,
      async writeGarbage() {
        await redis.admin.xadd(stream, '*', 'e', 'not json');
        await redis.admin.xadd(stream, '*', 'e', JSON.stringify({ type: 'acked', id: 'x', topic: 't', attempt: 1, at: -5 }));
        await redis.admin.xadd(stream, '*', 'other', '{}', 'e', '{}');
        await redis.admin.xadd(stream, '*', 'e', JSON.stringify({ type: '__proto__', id: 'x', topic: 't', attempt: 1, at: 5 }));
        return 4;
      },
      cleanup: async () => undefined,
    };
  });
});
