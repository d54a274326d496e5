/**
 * A Redis user without PUBLISH (a least-privilege ACL that forgot it): the wakeup notices are
 * lost, but nothing else is. promote.lua publishes after it has written (Redis does not roll a
 * script back), so a refused PUBLISH that failed the script lost its reply: the tasks it had
 * reserved for this process's own waiting consumer stayed reserved, unseen, until their ttr
 * ran out. The notice is sent with pcall: the promotion answers, and the refusal is logged.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Logger } from '../../../src/core/ports/index.js';
import { DelayQueue } from '../../../src/open-queue.js';
import { redisSkip, redisWithMuteUser } from '../../helpers/redis-servers.js';

const skip = redisSkip();

/** A logger that keeps the message of each warning and error, after its level. */
function recordingLogger(lines: string[]): Logger {
  const note = (level: string) => (first: unknown, message?: unknown) => {
    lines.push(`${level} ${typeof first === 'string' ? first : typeof message === 'string' ? message : ''}`);
  };
  const logger = { debug: () => undefined, info: () => undefined, warn: note('warn'), error: note('error'), child: () => logger };
  return logger;
}

describe('redis: a user who may not PUBLISH', { skip }, () => {
  const redis = redisWithMuteUser();

  it('promotion still answers: its own waiting consumer gets the due tasks at once (was STORE_UNAVAILABLE), and the refusal is logged', { timeout: 60_000 }, async () => {
    const lines: string[] = [];
    const queue = await DelayQueue.open({ store: redis.muteUrl, storeOptions: { prefix: 'refused', shards: 1 }, logger: recordingLogger(lines) });
    try {
      // This process owns the only shard. 100 tasks fall due together while one consumer
      // waits: the promotion reserves what it asks for (a prefetch of 64) and pushes the rest
      // to the ready list, and then publishes.
      const ttrMs = 20_000;
      const waiting = queue.reserve('mail', { max: 1, waitMs: 15_000 });
      const runAt = Date.now() + 1_000;
      const ids = Array.from({ length: 100 }, (_, i) => `refused-${i}`);
      await queue.scheduleMany(ids.map((id) => ({ id, topic: 'mail', payload: null, runAt, ttrMs })));
      const seen = new Map<string, number>();
      const take = async (deliveries: readonly { id: string; receipt: string }[]): Promise<void> => {
        for (const d of deliveries) {
          seen.set(d.id, Date.now());
          await queue.ack(d.id, d.receipt);
        }
      };
      await take(await waiting);
      const deadline = runAt + 5_000;
      while (seen.size < ids.length && Date.now() < deadline) await take(await queue.reserve('mail', { max: 10, waitMs: 500 }));
      assert.equal(seen.size, ids.length, `all delivered within 5 s of their runAt (their ttr is ${ttrMs} ms)`);
      for (const at of seen.values()) assert.ok(at >= runAt, 'not before its runAt');
      assert.ok(lines.some((l) => l.startsWith('warn') && l.includes('PUBLISH')), `the refused PUBLISH is logged: ${lines.join(' | ')}`);
    } finally {
      await queue.close();
    }
  });
});
