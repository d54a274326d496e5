/**
 * One system of `npm run bench -- postgres` in a process of its own (postgres.bench.ts):
 * delayq on this repository's Node, pg-boss 12 and graphile-worker 0.18 on Node >= 22 (they
 * require it). Prints one JSON line of results. Each system gets a fresh schema of its
 * own, dropped at the end.
 *
 *   S1  schedule `count` tasks due in an hour, in batches of 1,000: tasks/s, and bytes per
 *       pending task from pg_total_relation_size of the system's tables
 *   S2  `due` tasks due within 2 s (scheduled ahead, due from 8 s on): deliveries/s over the
 *       2 s, lateness p50 / p99 / max (delivery start - due time), none early
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';

interface Config {
  readonly system: 'delayq' | 'pg-boss' | 'graphile-worker';
  readonly url: string;
  readonly count: number;
  readonly due: number;
}

const config = JSON.parse(process.argv[2]!) as Config;
const schema = `bench_${config.system.replace('-', '_')}_${randomBytes(3).toString('hex')}`;
const BATCH = 1_000;
const LEAD_MS = 8_000;
const SPREAD_MS = 2_000;

interface System {
  /** Schedules `runAts.length` tasks, in batches, each with its due time in its payload. */
  schedule(prefix: string, runAts: readonly number[]): Promise<void>;
  /** Starts consuming; `seen(runAt)` per delivery. */
  work(seen: (runAt: number) => void): Promise<void>;
  close(): Promise<void>;
}

async function open(): Promise<System> {
  if (config.system === 'delayq') {
    const { DelayQueue } = await import('../src/open-queue.js');
    const q = await DelayQueue.open({ store: `${config.url}?schema=${schema}` });
    return {
      async schedule(prefix, runAts) {
        for (let from = 0; from < runAts.length; from += BATCH)
          await q.scheduleMany(runAts.slice(from, from + BATCH).map((runAt, i) => ({ id: `${prefix}-${from + i}`, topic: 'bench', payload: { runAt }, runAt })));
      },
      async work(seen) {
        q.work('bench', (d) => seen(d.runAt), { concurrency: 200 });
      },
      close: () => q.close(),
    };
  }
  if (config.system === 'pg-boss') {
    const { PgBoss } = await import('pg-boss');
    const boss = new PgBoss({ connectionString: config.url, schema, supervise: false, schedule: false });
    boss.on('error', () => undefined);
    await boss.start();
    await boss.createQueue('bench');
    return {
      async schedule(_, runAts) {
        for (let from = 0; from < runAts.length; from += BATCH)
          await boss.insert('bench', runAts.slice(from, from + BATCH).map((runAt) => ({ data: { runAt }, startAfter: new Date(runAt) })));
      },
      async work(seen) {
        // Its fastest documented polling (0.5 s), fetching while batches come back full.
        await boss.work<{ runAt: number }>('bench', { batchSize: 200, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true, localConcurrency: 4 }, async (jobs) => {
          for (const job of jobs) seen(job.data.runAt);
        });
      },
      close: () => boss.stop({ graceful: false }),
    };
  }
  const { makeWorkerUtils, run } = await import('graphile-worker');
  const utils = await makeWorkerUtils({ connectionString: config.url, schema });
  await utils.migrate();
  let runner: Awaited<ReturnType<typeof run>> | null = null;
  return {
    async schedule(_, runAts) {
      for (let from = 0; from < runAts.length; from += BATCH)
        await utils.addJobs(runAts.slice(from, from + BATCH).map((runAt) => ({ identifier: 'bench', payload: { runAt }, runAt: new Date(runAt) })));
    },
    async work(seen) {
      // Polls for jobs that become due (LISTEN/NOTIFY only covers jobs due at once); 500 ms instead of its 2 s default.
      runner = await run({
        connectionString: config.url,
        schema,
        concurrency: 50,
        pollInterval: 500,
        noHandleSignals: true,
        logger: new (await import('graphile-worker')).Logger(() => () => undefined),
        taskList: { bench: async (payload) => void seen((payload as { runAt: number }).runAt) },
      });
    },
    async close() {
      await runner?.stop();
      await utils.release();
    },
  };
}

async function bytesOf(admin: pg.Client): Promise<number> {
  const { rows } = await admin.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm')`,
    [schema],
  );
  return Number(rows[0]!.bytes);
}

function quantile(sorted: readonly number[], q: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

const admin = new pg.Client({ connectionString: config.url });
await admin.connect();
const system = await open();
try {
  const empty = await bytesOf(admin);
  // S1
  const later = Date.now() + 3_600_000;
  const s1Start = performance.now();
  await system.schedule('s1', Array.from({ length: config.count }, () => later));
  const s1Seconds = (performance.now() - s1Start) / 1_000;
  await admin.query('CHECKPOINT').catch(() => undefined);
  const bytesPerTask = ((await bytesOf(admin)) - empty) / config.count;
  // S2
  const lateness: number[] = [];
  let early = 0;
  let last = 0;
  const dueFrom = Date.now() + LEAD_MS;
  await system.work((runAt) => {
    const at = Date.now();
    if (at < runAt) early++;
    lateness.push(at - runAt);
    last = at;
  });
  await system.schedule('s2', Array.from({ length: config.due }, (_, i) => dueFrom + Math.floor((i * SPREAD_MS) / config.due)));
  const scheduledBy = Date.now();
  const deadline = dueFrom + SPREAD_MS + 120_000;
  while (lateness.length < config.due && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  lateness.sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      system: config.system,
      s1TasksPerSecond: Math.round(config.count / s1Seconds),
      bytesPerTask: Math.round(bytesPerTask),
      s2Delivered: lateness.length,
      s2ScheduledBeforeDue: scheduledBy < dueFrom,
      s2PerSecond: Math.round(lateness.length / Math.max(0.001, (last - dueFrom) / 1_000)),
      s2LatenessP50: quantile(lateness, 0.5),
      s2LatenessP99: quantile(lateness, 0.99),
      s2LatenessMax: lateness.at(-1) ?? NaN,
      early,
    }),
  );
} finally {
  await system.close().catch(() => undefined);
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await admin.end();
}
