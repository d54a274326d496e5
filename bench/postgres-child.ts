/**
 * One system of `npm run bench -- postgres` in a process of its own (postgres.bench.ts):
 * delayq on this repository's Node, pg-boss 12 and graphile-worker 0.18 on Node >= 22 (they
 * require it). Prints one JSON line of results. Each run gets a fresh schema of its own,
 * dropped at the end. `phase` picks the scenarios:
 *
 *   main  after a warm-up burst (unmeasured, the same for every system):
 *         S1  schedule `count` tasks due in an hour, in batches of 1,000: tasks/s
 *         S2  `due` tasks due within 2 s, scheduled ahead (the window opens once the S1 rate
 *             had scheduled them all, with slack): delivered/s over the window, lateness
 *         S3  `s3Rate` tasks/s for `s3Seconds`, each due 1 s after it is scheduled (a batch
 *             every 10 ms): lateness
 *         and, for delayq, S1's ceiling: PostgreSQL alone inserting such rows (s1Ceiling)
 *   s4    `s4Count` pending tasks: bytes per task (pg_total_relation_size of every table of
 *         the schema, with indexes and TOAST, after minus before), then `cancels` of them
 *         cancelled by id, one call each, 50 calls at a time: cancels/s
 *   tx    `txCount` transactions, 20 at a time, each inserting a row of its own table and
 *         scheduling one task due at once in it, then committing: lateness from the commit
 *   multi delayq only: this process schedules and consumes, two more (phase `consumer`)
 *         consume the same schema: S2 and S3 across the three
 *
 * Lateness = when the handler started - max(the task's due time, its commit): p50 / p99 / max.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';

export interface Config {
  readonly system: 'delayq' | 'pg-boss' | 'graphile-worker';
  readonly phase: 'main' | 's4' | 'tx' | 'multi' | 'consumer';
  readonly url: string;
  readonly count: number;
  readonly due: number;
  readonly s3Rate: number;
  readonly s3Seconds: number;
  readonly s4Count: number;
  readonly cancels: number;
  readonly txCount: number;
  /** Handlers in flight at once, the same for every system (the equal concurrency: 50). */
  readonly concurrency: number;
  /** Every task's payload, as JSON, is this many bytes (64, as in the peers' published runs). */
  readonly payloadBytes: number;
  /** phase `consumer`: the schema of the `multi` process that started it. */
  readonly schema?: string;
}

export interface Lateness {
  readonly delivered: number;
  readonly expected: number;
  readonly perSecond: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly early: number;
  readonly duplicates: number;
}

const config = JSON.parse(process.argv[2]!) as Config;
const schema = config.schema ?? `bench_${config.system.replace('-', '_')}_${randomBytes(3).toString('hex')}`;
const BATCH = 1_000;

/** `fields` with a `pad` string added so that its JSON is `config.payloadBytes` long (or as short as it can be). */
function padded<T extends object>(fields: T): T & { pad: string } {
  const bare = JSON.stringify({ ...fields, pad: '' }).length;
  return { ...fields, pad: 'x'.repeat(Math.max(0, config.payloadBytes - bare)) };
}
const SPREAD_MS = 2_000;
const S3_LEAD_MS = 1_000;
const S3_TICK_MS = 10;
const WAIT_AFTER_MS = 60_000;

interface Task {
  readonly id: string;
  readonly runAt: number;
}

interface System {
  /** Schedules `tasks` in one call (at most BATCH), each with its due time in its payload. */
  schedule(tasks: readonly Task[]): Promise<void>;
  /** Schedules `task` inside a transaction of its own on `client`, after the caller's own insert. */
  scheduleInTx(client: pg.PoolClient, task: Task): Promise<void>;
  /** Starts consuming; `seen(id, runAt)` per delivery, when the handler starts. */
  work(seen: (id: string, runAt: number) => void): Promise<void>;
  cancel(id: string): Promise<void>;
  close(): Promise<void>;
}

async function open(): Promise<System> {
  if (config.system === 'delayq') {
    const { DelayQueue } = await import('../src/open-queue.js');
    const q = await DelayQueue.open({ store: `${config.url}?schema=${schema}` });
    return {
      async schedule(tasks) {
        await q.scheduleMany(tasks.map(({ id, runAt }) => ({ id, topic: 'bench', payload: padded({ runAt }), runAt })));
      },
      async scheduleInTx(client, { id, runAt }) {
        await q.schedule({ id, topic: 'bench', payload: padded({ runAt }), runAt }, { tx: client });
      },
      async work(seen) {
        // The same number of handlers in flight as every other system.
        q.work('bench', (d) => seen(d.id, d.runAt), { concurrency: config.concurrency });
      },
      async cancel(id) {
        await q.cancel(id);
      },
      close: () => q.close(),
    };
  }
  if (config.system === 'pg-boss') {
    const { PgBoss } = await import('pg-boss');
    // Its ids are uuids: ours ride in the payload, and the uuid of each is kept for cancels.
    const uuids = new Map<string, string>();
    const boss = new PgBoss({ connectionString: config.url, schema, supervise: false, schedule: false, max: 10 });
    boss.on('error', () => undefined);
    await boss.start();
    await boss.createQueue('bench');
    return {
      async schedule(tasks) {
        await boss.insert(
          'bench',
          tasks.map(({ id, runAt }) => {
            const uuid = randomUUID();
            if (config.phase === 's4') uuids.set(id, uuid);
            return { id: uuid, data: padded({ runAt, id }), startAfter: new Date(runAt) };
          }),
        );
      },
      async scheduleInTx(client, { id, runAt }) {
        await boss.send('bench', padded({ runAt, id }), { startAfter: new Date(runAt), db: { executeSql: (text, values) => client.query(text, values) } });
      },
      async work(seen) {
        // Its fastest documented polling (0.5 s), fetching again at once while batches come back
        // full; one worker whose batch is `concurrency` jobs: that many handlers in flight.
        await boss.work<{ runAt: number; id: string }>('bench', { batchSize: config.concurrency, pollingIntervalSeconds: 0.5, burstWhenBatchFull: true, localConcurrency: 1 }, async (jobs) => {
          for (const job of jobs) seen(job.data.id, job.data.runAt);
        });
      },
      async cancel(id) {
        await boss.cancel('bench', uuids.get(id)!);
      },
      close: () => boss.stop({ graceful: false }),
    };
  }
  const graphile = await import('graphile-worker');
  const utils = await graphile.makeWorkerUtils({ connectionString: config.url, schema });
  await utils.migrate();
  let runner: Awaited<ReturnType<typeof graphile.run>> | null = null;
  const ids = new Map<string, string>();
  return {
    async schedule(tasks) {
      const jobs = await utils.addJobs(tasks.map(({ id, runAt }) => ({ identifier: 'bench', payload: padded({ runAt, id }), runAt: new Date(runAt) })));
      // Its ids are its own (a bigint sequence): cancels need them.
      if (config.phase === 's4') jobs.forEach((job, i) => ids.set(tasks[i]!.id, job.id));
    },
    async scheduleInTx(client, { id, runAt }) {
      await client.query(`SELECT "${schema}".add_job('bench', $1::json, run_at => $2::timestamptz)`, [JSON.stringify(padded({ runAt, id })), new Date(runAt)]);
    },
    async work(seen) {
      // Polls for jobs that become due (LISTEN/NOTIFY only covers jobs due at once); 500 ms instead of its 2 s default.
      runner = await graphile.run({
        connectionString: config.url,
        schema,
        concurrency: config.concurrency,
        pollInterval: 500,
        noHandleSignals: true,
        logger: new graphile.Logger(() => () => undefined),
        taskList: {
          bench: async (payload) => {
            const { id, runAt } = payload as { id: string; runAt: number };
            seen(id, runAt);
          },
        },
      });
    },
    async cancel(id) {
      // No cancel as such: a failed-for-good job is never run (what its docs suggest).
      await utils.permanentlyFailJobs([ids.get(id)!], 'cancelled');
    },
    async close() {
      await runner?.stop();
      await utils.release();
    },
  };
}

/** Delivery bookkeeping of one scenario (its ids start with `prefix`): lateness per first delivery, duplicates, early ones. */
class Tally {
  constructor(private readonly prefix: string) {}

  readonly lateness: number[] = [];
  readonly seen = new Set<string>();
  /** The earliest time each id may fire (set by tx before commit: its commit time). */
  readonly notBefore = new Map<string, number>();
  duplicates = 0;
  early = 0;
  last = 0;

  record(id: string, runAt: number, at = Date.now()): void {
    // An earlier scenario's backlog, drained during this one, is not this one's.
    if (!id.startsWith(this.prefix)) return;
    if (this.seen.has(id)) {
      this.duplicates++;
      return;
    }
    this.seen.add(id);
    if (at < runAt) this.early++;
    this.lateness.push(at - Math.max(runAt, this.notBefore.get(id) ?? 0));
    this.last = Math.max(this.last, at);
  }

  async until(expected: number, deadline: number): Promise<void> {
    while (this.seen.size < expected && Date.now() < deadline) await sleep(20);
  }

  stats(expected: number, windowStart: number): Lateness {
    const sorted = Float64Array.from(this.lateness).sort();
    const q = (p: number): number => (sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!);
    return {
      delivered: this.seen.size,
      expected,
      perSecond: Math.round(this.seen.size / Math.max(0.001, (this.last - windowStart) / 1_000)),
      p50: q(0.5),
      p99: q(0.99),
      max: sorted.at(-1) ?? NaN,
      early: this.early,
      duplicates: this.duplicates,
    };
  }
}

async function scheduleAll(system: System, prefix: string, n: number, runAt: (i: number) => number): Promise<void> {
  for (let from = 0; from < n; from += BATCH)
    await system.schedule(Array.from({ length: Math.min(BATCH, n - from) }, (_, j) => ({ id: `${prefix}-${from + j}`, runAt: runAt(from + j) })));
}

async function bytesOf(admin: pg.Client): Promise<number> {
  // Tables and materialized views with their indexes and TOAST (pg_total_relation_size).
  const { rows } = await admin.query<{ bytes: string }>(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'm')`,
    [schema],
  );
  return Number(rows[0]!.bytes);
}

/** Fires a burst through the delivery path, unmeasured: the scenarios then measure warm code. */
async function warmUp(system: System, tally: Tally): Promise<void> {
  const n = 2_000;
  const start = Date.now() + 500;
  await scheduleAll(system, 'warm', n, (i) => start + Math.floor((i * 500) / n));
  await tally.until(n, Date.now() + WAIT_AFTER_MS);
}

/**
 * S1's ceiling on this host: PostgreSQL alone writing `count` rows like delayq's S1 rows into
 * delayq's tasks table, 1,000 a statement (INSERT ... SELECT generate_series: no client, no
 * parameters, no ON CONFLICT, no counters). No store can schedule faster than this.
 */
async function s1Ceiling(admin: pg.Client): Promise<number> {
  const later = Date.now() + 3_600_000;
  const started = performance.now();
  for (let from = 0; from < config.count; from += BATCH)
    await admin.query(
      `INSERT INTO "${schema}".tasks (id, topic, state, run_at, due_at, created_at, payload, shard)
       SELECT 'c1-' || g, 'bench', 'pending', $1::bigint, $1::bigint, $2::bigint, $4, (g % 16)::smallint
         FROM generate_series($3::int, $3::int + ${BATCH - 1}) g`,
      [later, Date.now(), from, JSON.stringify(padded({ runAt: later }))],
    );
  return Math.round(config.count / ((performance.now() - started) / 1_000));
}

async function s1(system: System): Promise<number> {
  const later = Date.now() + 3_600_000;
  const started = performance.now();
  await scheduleAll(system, 's1', config.count, () => later);
  return Math.round(config.count / ((performance.now() - started) / 1_000));
}

async function s2(system: System, tally: Tally, scheduleRate: number): Promise<Lateness & { scheduledBeforeDue: boolean }> {
  const dueFrom = Date.now() + Math.ceil((config.due / scheduleRate) * 1_500) + 1_000;
  await scheduleAll(system, 's2', config.due, (i) => dueFrom + Math.floor((i * SPREAD_MS) / config.due));
  const scheduledBy = Date.now();
  await tally.until(config.due, dueFrom + SPREAD_MS + WAIT_AFTER_MS);
  return { ...tally.stats(config.due, dueFrom), scheduledBeforeDue: scheduledBy < dueFrom };
}

async function s3(system: System, tally: Tally): Promise<Lateness> {
  const perTick = Math.round((config.s3Rate * S3_TICK_MS) / 1_000);
  const ticks = (config.s3Seconds * 1_000) / S3_TICK_MS;
  const start = Date.now();
  const inFlight: Promise<unknown>[] = [];
  for (let k = 0; k < ticks; k++) {
    const wait = start + k * S3_TICK_MS - Date.now();
    if (wait > 0) await sleep(wait);
    const runAt = Date.now() + S3_LEAD_MS;
    inFlight.push(system.schedule(Array.from({ length: perTick }, (_, j) => ({ id: `s3-${k}-${j}`, runAt }))));
  }
  await Promise.all(inFlight);
  await tally.until(ticks * perTick, Date.now() + S3_LEAD_MS + WAIT_AFTER_MS);
  return tally.stats(ticks * perTick, start + S3_LEAD_MS);
}

async function s4(system: System, admin: pg.Client): Promise<{ bytesPerTask: number; cancelsPerSecond: number }> {
  const before = await bytesOf(admin);
  const later = Date.now() + 3_600_000;
  await scheduleAll(system, 's4', config.s4Count, () => later);
  await admin.query('CHECKPOINT').catch(() => undefined);
  const bytesPerTask = ((await bytesOf(admin)) - before) / config.s4Count;
  const step = Math.max(1, Math.floor(config.s4Count / config.cancels));
  const victims = Array.from({ length: Math.min(config.cancels, config.s4Count) }, (_, i) => `s4-${i * step}`);
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 50 }, async () => {
      while (next < victims.length) await system.cancel(victims[next++]!);
    }),
  );
  return { bytesPerTask: Math.round(bytesPerTask), cancelsPerSecond: Math.round(victims.length / ((performance.now() - started) / 1_000)) };
}

async function tx(system: System, tally: Tally): Promise<Lateness> {
  const pool = new pg.Pool({ connectionString: config.url, max: 20 });
  await pool.query(`CREATE TABLE IF NOT EXISTS "${schema}".orders (id text PRIMARY KEY, at bigint NOT NULL)`);
  let next = 0;
  const started = Date.now();
  try {
    await Promise.all(
      Array.from({ length: 20 }, async () => {
        const client = await pool.connect();
        try {
          while (next < config.txCount) {
            const id = `tx-${next++}`;
            await client.query('BEGIN');
            await client.query(`INSERT INTO "${schema}".orders (id, at) VALUES ($1, $2)`, [id, Date.now()]);
            await system.scheduleInTx(client, { id, runAt: Date.now() });
            tally.notBefore.set(id, Date.now());
            await client.query('COMMIT');
            // Lateness counts from the commit's answer at the latest: the task can fire no sooner.
            tally.notBefore.set(id, Date.now());
          }
        } finally {
          client.release();
        }
      }),
    );
    await tally.until(config.txCount, Date.now() + WAIT_AFTER_MS);
  } finally {
    await pool.end();
  }
  return tally.stats(config.txCount, started);
}

/** phase multi: two more processes consuming the same schema, reporting "L id runAt at" lines. */
async function startConsumers(current: { readonly tally: Tally }): Promise<ChildProcess[]> {
  const children: ChildProcess[] = [];
  const ready: Promise<void>[] = [];
  for (let n = 0; n < 2; n++) {
    const child = spawn(process.execPath, ['--import', 'tsx', new URL(import.meta.url).pathname, JSON.stringify({ ...config, phase: 'consumer', schema })], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    children.push(child);
    const lines = createInterface({ input: child.stdout });
    ready.push(
      new Promise<void>((resolve) =>
        lines.on('line', (line) => {
          if (line === 'READY') return resolve();
          const [tag, id, runAt, at] = line.split(' ');
          if (tag === 'L' && id !== undefined) current.tally.record(id, Number(runAt), Number(at));
        }),
      ),
    );
  }
  await Promise.all(ready);
  return children;
}

async function consumer(): Promise<void> {
  const system = await open();
  let out: string[] = [];
  const flush = (): void => {
    if (out.length > 0) process.stdout.write(out.join(''));
    out = [];
  };
  const timer = setInterval(flush, 50);
  await system.work((id, runAt) => void out.push(`L ${id} ${runAt} ${Date.now()}\n`));
  process.stdout.write('READY\n');
  process.on('SIGTERM', () => {
    void system.close().finally(() => {
      clearInterval(timer);
      flush();
      process.exit(0);
    });
  });
}

async function main(): Promise<Record<string, unknown>> {
  const admin = new pg.Client({ connectionString: config.url });
  await admin.connect();
  const system = await open();
  const tallies = { s2: new Tally('s2-'), s3: new Tally('s3-'), tx: new Tally('tx-'), warm: new Tally('warm-') };
  const children: ChildProcess[] = [];
  try {
    // One consumer for every scenario: each scenario's ids have their own prefix.
    const current = { tally: tallies.warm };
    await system.work((id, runAt) => current.tally.record(id, runAt));
    if (config.phase === 'main' || config.phase === 'multi') {
      if (config.phase === 'multi') {
        children.push(...(await startConsumers(current)));
        await sleep(7_000); // a lease period and a tick: the shards spread over the three
      }
      await warmUp(system, tallies.warm);
      const s1Rate = config.phase === 'main' ? await s1(system) : 0;
      current.tally = tallies.s2;
      const s2Stats = await s2(system, tallies.s2, s1Rate || 20_000);
      current.tally = tallies.s3;
      const s3Stats = await s3(system, tallies.s3);
      const s1CeilingRate = config.system === 'delayq' && config.phase === 'main' ? await s1Ceiling(admin) : undefined;
      return { s1: s1Rate, s1Ceiling: s1CeilingRate, s2: s2Stats, s3: s3Stats };
    }
    if (config.phase === 's4') return await s4(system, admin);
    current.tally = tallies.tx;
    return { tx: await tx(system, tallies.tx) };
  } finally {
    await stopConsumers(children);
    await system.close().catch(() => undefined);
    await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
    await admin.end();
  }
}

async function stopConsumers(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        }),
    ),
  );
}

if (config.phase === 'consumer') await consumer();
else console.log(JSON.stringify({ system: config.system, phase: config.phase, ...(await main()) }));
