/**
 * Failures of a store's background work (which no caller awaits) reach the logger given to
 * DelayQueue.open: the SQLite checkpoint worker, and the Redis lease ticks, reported once
 * per outage with their recovery. Real parts: a SQLite file, a redis-server.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import type { Logger } from '../../src/core/ports/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { Checkpointer, FALLBACK_AUTOCHECKPOINT } from '../../src/stores/sqlite/checkpointer.js';
import { storeSystemClock } from '../../src/stores/system-clock.js';
import { redisSkip, startRedis, type RedisServer } from '../helpers/redis-servers.js';

interface Entry {
  readonly level: keyof Logger;
  readonly msg: string;
}

function capturingLogger(): { logger: Logger; entries: Entry[] } {
  const entries: Entry[] = [];
  const at =
    (level: keyof Logger) =>
    (_obj: object, msg?: string): void => {
      entries.push({ level, msg: msg ?? '' });
    };
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, entries };
}

async function until(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

describe('store background failures', () => {
  it('sqlite: a checkpoint worker that cannot open the file is reported, and SQLite checkpoints on its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-bg-'));
    const db = new Database(join(dir, 'a.db'));
    try {
      db.pragma('journal_mode = WAL');
      const { logger, entries } = capturingLogger();
      // The worker opens this path itself: a directory that does not exist fails it at start.
      const checkpointer = new Checkpointer(db, join(dir, 'missing', 'a.db'), 'NORMAL', logger, storeSystemClock);
      checkpointer.start();
      await until(() => entries.some((e) => e.level === 'warn' && e.msg.includes('checkpoint worker failed')), 'the warning');
      assert.equal(db.pragma('wal_autocheckpoint', { simple: true }), FALLBACK_AUTOCHECKPOINT);
      assert.equal(checkpointer.mayWrite(), true);
      await checkpointer.stop();
    } finally {
      db.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  const skip = redisSkip();
  describe('redis', { skip }, () => {
    let server: RedisServer | undefined;
    after(async () => {
      await server?.stop();
      server?.remove();
    });

    it('a failing lease tick is reported once per outage, and so is its recovery', { timeout: 30_000 }, async () => {
      server = await startRedis();
      const admin = new Redis(server.url);
      const { logger, entries } = capturingLogger();
      const queue = await DelayQueue.open({ store: server.url, storeOptions: { prefix: 'bg' }, logger });
      try {
        const failures = (): number => entries.filter((e) => e.level === 'error' && e.msg.includes('lease tick failed')).length;
        // Each tick begins with a ZADD of the heartbeat: refused, every tick fails at once.
        await admin.call('ACL', 'SETUSER', 'default', '-zadd');
        await until(() => failures() > 0, 'the first failure');
        await sleep(2_500); // two or three more failed ticks
        assert.equal(failures(), 1, 'one report per outage');
        await admin.call('ACL', 'SETUSER', 'default', '+zadd');
        await until(() => entries.some((e) => e.level === 'info' && e.msg.includes('lease ticks work again')), 'the recovery');
        assert.equal(failures(), 1);
      } finally {
        await admin.call('ACL', 'SETUSER', 'default', '+zadd');
        await queue.close();
        admin.disconnect();
      }
    });
  });
});
