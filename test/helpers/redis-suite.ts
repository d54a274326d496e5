import { after, before } from 'node:test';
import { Redis } from 'ioredis';
import { startRedis, type RedisServer } from './redis-servers.js';

/** A redis-server of a suite's own and an admin client on it; read them inside its tests. */
export interface SuiteRedis {
  readonly server: RedisServer;
  readonly admin: Redis;
}

/**
 * Starts a redis-server before the tests of the suite this is called in and stops it
 * after them (a file of its own: bench/ starts servers too and never loads node:test).
 */
export function redisForSuite(): SuiteRedis {
  let server: RedisServer | undefined;
  let admin: Redis | undefined;
  before(async () => {
    server = await startRedis();
    admin = new Redis(server.url);
  });
  after(async () => {
    admin?.disconnect();
    await server?.stop();
    server?.remove();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the suite redis-server is read before its before() hook ran');
    return value;
  };
  return {
    get server() {
      return started(server);
    },
    get admin() {
      return started(admin);
    },
  };
}
