import { setTimeout as sleep } from 'node:timers/promises';
import { buildKeyspace } from '../../src/stores/redis/keys.js';
import type { Facts } from '../checker.js';
import { cli } from '../../test/helpers/redis-servers.js';
import { spawnWorker, stopWorker } from '../processes.js';
import { base, drain, readFacts, type Row, type Run, scenario, type Scenario } from '../round.js';
import { withRedis } from '../servers.js';

/** The limited topic's rate in the flow-limit scenario, per second, and its burst. */
const FLOW_RATE = 100;
const FLOW_BURST = 20;
/** The lag between an admission and its consumer's answer a span may show over its tokens (flowWindows). */
const FLOW_LAG_MS = 500;
/** How far off FLOW_RATE a judged 1 s window may be. */
const FLOW_TOLERANCE = 0.1;

/**
 * Three processes on one Redis, one topic limited to FLOW_RATE/s (burst FLOW_BURST,
 * concurrency 50), a backlog due well above that rate; one process SIGKILLed. Beside the
 * checker's promises, the delivered rate in 1 s windows (deliveries by the time their
 * consumer had them, duplicates included: each took a token): every window whose topic had a backlog of
 * at least FLOW_RATE due at its end, from the takeover of the dead process's shards on,
 * within FLOW_TOLERANCE of FLOW_RATE; no 1 s span from then on (sliding) over burst + rate;
 * and over the whole run no span over burst + rate * span by more than FLOW_LAG_MS of rate.
 * The takeover (every shard leased by a live process again, read from the lease keys) is
 * reported and left out of the judged windows.
 */
async function redisFlowLimit(run: Run): Promise<Row> {
  const name = 'redis: flow limit, owner SIGKILL';
  const faults = `one topic limited to ${FLOW_RATE}/s (burst ${FLOW_BURST}) under a backlog, 3 processes; one SIGKILLed`;
  return scenario(run, name, faults, 'clean', (round) =>
    // No AOF: the fault is a process, and an fsync per write on a busy disk stalls every consumer at once.
    withRedis({}, async (redis) => {
      const prefix = 'fl';
      const shards = 16;
      const store = `${redis.url}?prefix=${prefix}&shards=${shards}`;
      const limits = { rate: FLOW_RATE, burst: FLOW_BURST, concurrency: 50 };
      // 3 x 80/s scheduled, due within 1.5 s: a backlog that grows by ~140/s, ~60/s after the
      // kill (less on a loaded machine), drained at the limit once producing stops.
      const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `f${i}`, { rate: 80, consumers: 4, topic: 'limited', limits }), round));
      await Promise.all(workers.map((w) => w.ready));
      const startedAt = Date.now();
      const leases = buildKeyspace(prefix, shards).shards.map((s) => s.lease);
      const owners = (): (string | null)[] =>
        cli(redis.port, 'MGET', ...leases)
          .split('\n')
          .slice(0, shards)
          .map((v) => (v.trim() === '' ? null : v.trim().split(':')[0]!));
      await sleep(run.short ? 4_000 : 8_000);
      const before = new Set(owners());
      const killedAt = Date.now();
      workers[0]!.signal('SIGKILL');
      // The lease holders every 100 ms until the run ends: the takeover is read from them afterwards.
      const seen: { at: number; owners: (string | null)[] }[] = [];
      let polling = true;
      const poller = (async () => {
        while (polling) {
          seen.push({ at: Date.now(), owners: owners() });
          await sleep(100);
        }
      })();
      const live = workers.slice(1);
      await sleep(run.short ? 9_000 : 22_000);
      for (const w of live) w.signal('SIGUSR2');
      await drain(round);
      // Read before the workers stop: a worker that stops gives its leases up.
      polling = false;
      await poller;
      await Promise.all(live.map(stopWorker));
      const alive = new Set(seen.at(-1)?.owners ?? []);
      const dead = [...before].filter((o) => o !== null && !alive.has(o));
      const takeoverAt = seen.find((s) => s.owners.every((o) => o !== null && !dead.includes(o)))?.at ?? null;
      readFacts(round);
      const verdict = flowWindows(round.facts, { from: startedAt, killedAt, takeoverAt, rate: FLOW_RATE, burst: FLOW_BURST });
      round.notes.push(...verdict.notes);
      if (dead.length !== 1) throw new Error(`expected the killed process to have held shards under one lease owner, found ${dead.length} (${before.size} owners before the kill)`);
      if (takeoverAt === null) throw new Error('the dead process\'s shards were never taken over');
      if (verdict.problem !== null) throw new Error(verdict.problem);
    }),
  );
}

/**
 * The flow-limit scenario's rate judgement over the facts: 1 s windows from `from`, each
 * with its deliveries (by reservation time) and the backlog due at its end (acknowledged,
 * runAt passed, not yet delivered).
 */
function flowWindows(
  facts: Facts,
  { from, killedAt, takeoverAt, rate, burst }: { from: number; killedAt: number; takeoverAt: number | null; rate: number; burst: number },
): { notes: string[]; problem: string | null } {
  // When each consumer had its delivery: a reservation may be made ahead of its admission
  // (the Redis store's prefetch keeps a surplus up to 100 ms for the next call, ADR 0007).
  const gotOf = (d: Facts['deliveries'][number]): number => d.got ?? d.at;
  const times = facts.deliveries.map(gotOf).sort((a, b) => a - b);
  const first = new Map<string, number>();
  for (const d of facts.deliveries) if (!first.has(d.id) || gotOf(d) < first.get(d.id)!) first.set(d.id, gotOf(d));
  const last = times.at(-1) ?? from;
  const windows: { start: number; delivered: number; backlog: number }[] = [];
  for (let start = from; start + 1_000 <= last; start += 1_000) {
    const end = start + 1_000;
    let delivered = 0;
    for (const t of times) if (t >= start && t < end) delivered++;
    let backlog = 0;
    for (const [id, runAt] of facts.scheduled) if (runAt < end && (first.get(id) ?? Infinity) >= end) backlog++;
    windows.push({ start, delivered, backlog });
  }
  // Any 1 s span from the takeover on, sliding: the most deliveries in it.
  const steady = takeoverAt === null ? [] : times.filter((t) => t >= takeoverAt);
  let maxSpan = 0;
  for (let i = 0, j = 0; i < steady.length; i++) {
    while (steady[i]! - steady[j]! >= 1_000) j++;
    maxSpan = Math.max(maxSpan, i - j + 1);
  }
  // Over the whole run, spans of any length: the most deliveries past burst + rate * span. A
  // consumer has its delivery a little after the admission (more so while processes start,
  // or the machine is busy), so a span can gather a little more than its own tokens: the
  // excess, in ms of the rate, is that lag; a limit that does not hold grows it without bound.
  let excess = 0;
  let lowest = Infinity;
  times.forEach((t, k) => {
    const f = k - (rate * t) / 1_000;
    lowest = Math.min(lowest, f - 1);
    excess = Math.max(excess, f - lowest - burst);
  });
  const lagMs = Math.round((excess / rate) * 1_000);
  const low = rate * (1 - FLOW_TOLERANCE);
  const high = rate * (1 + FLOW_TOLERANCE);
  const judged = takeoverAt === null ? [] : windows.filter((w) => w.start >= takeoverAt && w.backlog >= rate);
  const off = judged.filter((w) => w.delivered < low || w.delivered > high);
  const during = windows.filter((w) => w.start + 1_000 > killedAt && (takeoverAt === null || w.start < takeoverAt));
  const rates = (ws: typeof windows): string => (ws.length === 0 ? '-' : ws.map((w) => w.delivered).join(' '));
  const mean = judged.length === 0 ? 0 : judged.reduce((n, w) => n + w.delivered, 0) / judged.length;
  const notes = [
    `takeover ${takeoverAt === null ? 'never seen' : `${((takeoverAt - killedAt) / 1000).toFixed(1)} s after the kill`}; windows (deliveries/s) before it: ${rates(windows.filter((w) => w.start + 1_000 <= killedAt))}; across it: ${rates(during)}`,
    `judged ${judged.length} windows after the takeover with >= ${rate} due: ${rates(judged)} (mean ${mean.toFixed(1)}/s, min ${Math.min(...judged.map((w) => w.delivered))}, max ${Math.max(...judged.map((w) => w.delivered))}); most in any 1 s span from the takeover on ${maxSpan} (cap burst + rate = ${burst + rate})`,
    `whole run: the most past burst + rate * span in any span ${Math.ceil(excess)} deliveries (${lagMs} ms of lag between admission and consumer; allowed ${FLOW_LAG_MS})`,
  ];
  let problem: string | null = null;
  if (judged.length < 5) problem = `only ${judged.length} windows could be judged (a backlog of >= ${rate} due after the takeover)`;
  else if (off.length > 0) problem = `${off.length} of ${judged.length} windows off ${rate}/s by more than ${FLOW_TOLERANCE * 100}%: ${rates(off)}`;
  else if (maxSpan > burst + rate) problem = `${maxSpan} deliveries in a 1 s span, over burst + rate = ${burst + rate}`;
  else if (lagMs > FLOW_LAG_MS) problem = `${Math.ceil(excess)} deliveries in a span past burst + rate * span: more than ${FLOW_LAG_MS} ms of lag explains`;
  return { notes, problem };
}

export const redisFlowLimitScenario: Scenario = { name: 'redis-flow-limit', needs: 'redis', run: redisFlowLimit };
