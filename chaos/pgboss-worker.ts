/**
 * The chaos cells' pg-boss worker: the same load and the same facts as worker.ts (S, D, A, E
 * and C lines, `R` on stdout once started; SIGUSR2 stops producing, SIGTERM stops), with
 * pg-boss 12 on the same PostgreSQL, so a cell's table shows both side by side. Runs on the
 * Node pg-boss requires (bench/node24.ts).
 *
 * Mapped onto pg-boss as its own consumer loop works (`work()` with pollingIntervalSeconds
 * 0.5, its fastest documented, and burstWhenBatchFull): each of `consumers` loops fetches up to
 * `reserveMax` jobs (`fetch`, includeMetadata for the attempt), holds them, completes them
 * (`complete`, fenced to the attempt fetched; only the jobs it settled count as acked), and waits 0.5 s after a fetch that came back short. A job's attempt is its
 * retryCount + 1; its delivery time is when the fetch answered (pg-boss keeps no reservation
 * time), never before the job was fetched. Jobs expire after ceil(ttrMs / 1000) s in active
 * state and are retried (the supervisor every second), as delayq's reservations run out.
 * Ids are the jobs' own UUIDs (pg-boss requires them), made here so a schedule sent again
 * after a lost answer is the same job.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { PgBoss } from 'pg-boss';
import { workerKit } from './worker-kit.js';

/** The schema pg-boss keeps its tables in (the chaos cells read its dead tuples there). */
export const PGBOSS_SCHEMA = 'pgboss_chaos';
const QUEUE = 'chaos';
const POLL_MS = 500;

const kit = workerKit();
const { config, state } = kit;
const out = (text: string): void => kit.out(text);

function failed(op: string, error: unknown, since: number): void {
  // pg-boss has no error codes of its own: the driver's (SQLSTATE or errno) or the error's name.
  const e = error as { code?: unknown; name?: unknown } | null;
  kit.failed(op, typeof e?.code === 'string' ? `!${e.code}` : `!${typeof e?.name === 'string' ? e.name : typeof error}`, since);
}

const boss = new PgBoss({
  connectionString: config.store,
  schema: PGBOSS_SCHEMA,
  application_name: 'pgboss',
  max: 10,
  schedule: false,
  supervise: true,
  superviseIntervalSeconds: 1,
});
// Without a listener an error event would end the process; each is counted instead.
boss.on('error', (error: unknown) => failed('boss', error, Date.now()));
await boss.start();
await boss.createQueue(QUEUE, { retryLimit: 1_000, retryDelay: 0, expireInSeconds: Math.max(1, Math.ceil(config.ttrMs / 1000)) });

async function produce(): Promise<void> {
  const padding = 'x'.repeat(Math.max(0, config.payloadBytes - 8));
  while (state.producing && state.running) {
    const started = Date.now();
    const count = kit.owed();
    if (count > 0) {
      const jobs = Array.from({ length: count }, () => ({ id: randomUUID(), runAt: kit.runAt() }));
      for (;;) {
        const sent = Date.now();
        try {
          await boss.insert(
            QUEUE,
            jobs.map((j) => ({ id: j.id, data: { p: padding }, startAfter: new Date(j.runAt) })),
          );
          kit.slow('schedule', sent);
          out(jobs.map((j) => `S ${j.id} ${j.runAt}\n`).join(''));
          break;
        } catch (error) {
          if (!state.running || !state.producing) return;
          failed('schedule', error, sent);
          await sleep(100);
        }
      }
    }
    await sleep(Math.max(0, 50 - (Date.now() - started)));
  }
}

async function consume(): Promise<void> {
  const batchSize = config.reserveMax ?? 20;
  while (state.running) {
    const asked = Date.now();
    let jobs;
    try {
      jobs = await boss.fetch(QUEUE, { batchSize, includeMetadata: true });
      kit.slow('reserve', asked);
    } catch (error) {
      if (state.running) failed('reserve', error, asked);
      await sleep(100);
      continue;
    }
    const got = Date.now();
    if (jobs.length > 0) {
      out(jobs.map((j) => `D ${j.id} ${j.retryCount + 1} ${got} ${got}\n`).join(''));
      await sleep(config.holdMs ?? Math.random() * 10);
      for (let tries = 0; tries < 20 && state.running; tries++) {
        const sent = Date.now();
        try {
          // Fenced to the attempt fetched (pg-boss 12 takes { id, retryCount }): an attempt that
          // expired and was fetched again meanwhile is not completed by this one.
          const response = (await boss.complete(
            QUEUE,
            jobs.map((j) => ({ id: j.id, retryCount: j.retryCount })),
          )) as { settled?: string[] };
          kit.slow('ack', sent);
          const done = Date.now();
          const settled = new Set(response.settled ?? jobs.map((j) => j.id));
          out(jobs.flatMap((j) => (settled.has(j.id) ? [`A ${j.id} ${j.retryCount + 1} ${done}\n`] : [])).join(''));
          break;
        } catch (error) {
          if (state.running) failed('ack', error, sent);
          await sleep(100);
        }
      }
    }
    if (jobs.length < batchSize) await sleep(POLL_MS);
  }
}

process.stdout.write('R\n');
kit.closeOnSigterm(() => boss.stop({ graceful: false, timeout: 2_000 }));
await Promise.all([produce(), ...Array.from({ length: config.consumers }, () => consume())]);
