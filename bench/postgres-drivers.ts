/**
 * The PostgreSQL store's driver choice (docs/adr/0038-postgres-driver.md): the store's hot
 * pattern, many concurrent single writes (1,000 producers each scheduling one task, a
 * worker acking what finished in one turn), on four ways of sending them:
 *
 *   pg, one statement each      a pool of 4 connections, one INSERT per call (what a naive store does)
 *   pg, pipelined               one connection in pg's pipeline mode (8.20+), one INSERT per call
 *   pg, coalesced into unnest   a pool of 4, calls made while a statement is in flight go in the next one (the store's way)
 *   postgres (porsager)         4 connections, one INSERT per call (it pipelines by itself)
 *
 * Each run inserts CALLS rows in waves of WAVE concurrent calls into a scratch table of a
 * fresh schema (dropped after), each way three times in turn; the figure is the median of
 * the three, and the ratios are of medians from the same run.
 *
 *   npx tsx bench/postgres-drivers.ts [--url postgres://postgres@127.0.0.1:5432/test] [--calls 20000] [--wave 1000]
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { ShardBatcher } from '../src/coordination/batcher.js';

const arg = (name: string, fallback: string): string => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
};
const URL = arg('url', process.env['DELAYQ_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test');
const CALLS = Number(arg('calls', '20000'));
const WAVE = Number(arg('wave', '1000'));
const RUNS = 3;
const schema = `drivers_${randomBytes(4).toString('hex')}`;
const table = `"${schema}".t`;

type Insert = (id: string, payload: string) => Promise<unknown>;

interface Way {
  readonly name: string;
  open(): Promise<{ insert: Insert; close: () => Promise<void> }>;
}

const SINGLE = `INSERT INTO ${table} (id, payload) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING`;
const BATCH = `INSERT INTO ${table} (id, payload) SELECT * FROM unnest($1::text[], $2::text[]) ON CONFLICT (id) DO NOTHING`;

const ways: Way[] = [
  {
    name: 'pg, one statement each',
    async open() {
      const pool = new pg.Pool({ connectionString: URL, max: 4 });
      return { insert: (id, payload) => pool.query({ name: 'single', text: SINGLE, values: [id, payload] }), close: () => pool.end() };
    },
  },
  {
    name: 'pg, pipelined',
    async open() {
      const client = new pg.Client({ connectionString: URL, pipeline: true });
      await client.connect();
      return { insert: (id, payload) => client.query({ name: 'single', text: SINGLE, values: [id, payload] }), close: () => client.end() };
    },
  },
  {
    name: 'pg, coalesced into unnest',
    async open() {
      const pool = new pg.Pool({ connectionString: URL, max: 4 });
      const batcher = new ShardBatcher<[string, string], undefined>(
        async (_, items) => {
          await pool.query({ name: 'batch', text: BATCH, values: [items.map((i) => i[0]), items.map((i) => i[1])] });
          return items.map(() => undefined);
        },
        2_000,
        2,
      );
      return { insert: (id, payload) => batcher.submit(0, [[id, payload]]), close: () => pool.end() };
    },
  },
  {
    name: 'postgres (porsager)',
    async open() {
      const sql = postgres(URL, { max: 4, onnotice: () => undefined });
      return { insert: (id, payload) => sql.unsafe(SINGLE, [id, payload], { prepare: true }), close: () => sql.end() };
    },
  },
];

async function measure(way: Way, run: number): Promise<number> {
  const { insert, close } = await way.open();
  try {
    const payload = JSON.stringify({ order: 42, note: 'x'.repeat(60) });
    const started = performance.now();
    for (let from = 0; from < CALLS; from += WAVE) {
      const wave: Promise<unknown>[] = [];
      for (let i = from; i < Math.min(CALLS, from + WAVE); i++) wave.push(insert(`r${run}-${way.name.length}-${i}`, payload));
      await Promise.all(wave);
    }
    return CALLS / ((performance.now() - started) / 1_000);
  } finally {
    await close();
  }
}

const admin = new pg.Client({ connectionString: URL });
await admin.connect();
try {
  await admin.query(`CREATE SCHEMA "${schema}"`);
  const results = new Map<string, number[]>(ways.map((w) => [w.name, []]));
  for (let run = 0; run < RUNS; run++)
    for (const way of ways) {
      await admin.query(`DROP TABLE IF EXISTS ${table}; CREATE TABLE ${table} (id text PRIMARY KEY, payload text NOT NULL)`);
      results.get(way.name)!.push(await measure(way, run));
    }
  const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const base = median(results.get(ways[0]!.name)!);
  console.log(`${CALLS} concurrent single-row inserts in waves of ${WAVE}, median of ${RUNS} (${new Date().toISOString()})`);
  console.log('| way | inserts/s (runs) | median | vs one statement each |');
  console.log('|---|---|---|---|');
  for (const [name, xs] of results)
    console.log(`| ${name} | ${xs.map((x) => Math.round(x)).join(', ')} | ${Math.round(median(xs))} | ${(median(xs) / base).toFixed(2)}x |`);
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).catch(() => undefined);
  await admin.end();
}
