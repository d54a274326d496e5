// The remote timers over the PostgreSQL timer backend (src/stores/postgres/timer-backend.ts)
// on real rows and real NOTIFY: timers published by NOTIFY on the schema's timers channel,
// shards read by load-due.sql, timers written by the store's own schedule statement
// (src/testing/remote-timer-conformance.ts; the same suite runs in memory and on Redis).
// One pool of 3 for every view, the writes and the sends, and one LISTEN connection whose
// notifications go to every view (as each process's own LISTEN would hear them all): the
// server's 100 connections are shared with the other test files running beside this one.
import pg from 'pg';
import { silentLogger } from '../../../src/core/logger.js';
import { channelsOf } from '../../../src/stores/postgres/channels.js';
import { createPool } from '../../../src/stores/postgres/connection.js';
import { PgContext } from '../../../src/stores/postgres/context.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { MAX_BATCH, scheduleTasks } from '../../../src/stores/postgres/task-writes.js';
import { pgTimerBackend } from '../../../src/stores/postgres/timer-backend.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runRemoteTimerConformance } from '../../../src/testing/remote-timer-conformance.js';
import { task } from '../../../src/testing/store-conformance/index.js';
import { dropSchema, freshSchema, PG_URL } from '../../helpers/postgres.js';

runRemoteTimerConformance('postgres', async () => {
  const schema = freshSchema('timers');
  // Opening a store once creates the schema; the suite then uses its rows and channels only.
  await (await openPostgresStore(`${PG_URL}?schema=${schema}`, { clock: storeSystemClock })).close();
  const pool = createPool(PG_URL, silentLogger, 10_000, 3);
  const context = new PgContext(pool, schema, 0, 16, `remote timer conformance (schema ${schema})`);
  const channels = channelsOf(schema);
  const receivers: ((message: string) => void)[] = [];
  const listener = new pg.Client({ connectionString: PG_URL });
  await listener.connect();
  listener.on('notification', (notice) => {
    if (notice.channel === channels.timers) for (const receive of receivers) receive(notice.payload ?? '');
  });
  await listener.query(`LISTEN "${channels.timers}"`);
  return {
    async backend(receive) {
      receivers.push(receive);
      return pgTimerBackend(context, channels);
    },
    delivers: true,
    async seed(timers, writtenAt) {
      for (let at = 0; at < timers.length; at += MAX_BATCH)
        await scheduleTasks(context, timers.slice(at, at + MAX_BATCH).map(({ id, topic, dueAt }) => task(id, { topic, runAt: dueAt })), writtenAt);
    },
    send: async (message) => void (await context.query(context.sql('notify'), [channels.timers, [message]])),
    async close() {
      await listener.end();
      await pool.end();
      await dropSchema(schema);
    },
  };
});
