/**
 * A shared store with no notifications at all passes the shared-store conformance suite
 * (issue 50: the protocol does not assume notices). Through pgbouncer in transaction mode
 * with no `listenUrl`, LISTEN never hears anything: the store's probe finds that notices do
 * not arrive and its consumers poll every POLL_MS; timers other processes publish never
 * arrive either, so a task due in a partition another process owns is claimed from the due
 * index by a poll. Every case of the suite (several processes, takeovers, forged messages)
 * must hold all the same.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Logger } from '../../../src/core/ports/index.js';
import { DelayQueue } from '../../../src/index.js';
import { PROBE_MS } from '../../../src/stores/postgres/listener.js';
import { POLL_MS } from '../../../src/stores/postgres/shared.js';
import { runSharedConformance } from '../../../src/testing/shared-conformance.js';
import { startPgbouncer, type Pgbouncer } from '../../helpers/pgbouncer.js';
import { dropSchema, freshSchema, withClient } from '../../helpers/postgres.js';

let bouncer: Pgbouncer;
before(async () => {
  bouncer = await startPgbouncer();
});
after(async () => {
  await bouncer.stop();
});

const schemas: string[] = [];
describe('postgres, polling only (pgbouncer in transaction mode, no listenUrl)', () => {
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });
  it('is polling only: a process on such a URL finds that notices do not arrive and polls', async () => {
    const schema = freshSchema('poll');
    schemas.push(schema);
    const warnings: string[] = [];
    const note = (): void => undefined;
    const logger: Logger = { debug: note, info: note, error: note, warn: (_fields, message) => void warnings.push(message ?? '') };
    const queue = await DelayQueue.open({ store: bouncer.url({ schema }), logger });
    try {
      const until = Date.now() + PROBE_MS + 3_000;
      while (!warnings.some((w) => w.includes(`poll every ${POLL_MS} ms`)) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      assert.ok(warnings.some((w) => w.includes(`poll every ${POLL_MS} ms`)), `warned: ${JSON.stringify(warnings)}`);
    } finally {
      await queue.close();
    }
  });

  runSharedConformance('postgres, polling only', {
    namespace: async () => {
      const schema = freshSchema('poll');
      schemas.push(schema);
      return { url: bouncer.url({ schema }), storeOptions: {} };
    },
    takeoverMs: 6_000,
    // Sent on the server directly: nobody listens, so nothing arrives, and nothing must break.
    send: async (space, channel, message) => {
      const schema = new URL(space.url).searchParams.get('schema')!;
      await withClient((client) => client.query('SELECT pg_notify($1, $2)', [`delayq:${schema}:${channel}`, message])).catch((error: unknown) => {
        if (!/payload string too long/.test(String(error))) throw error;
      });
    },
  });
});
