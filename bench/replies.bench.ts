/**
 * npm run bench -- replies [--against <git rev>] [--rounds N]
 *
 * The cost in Redis of the reply of ack.lua and cancel.lua: this tree's scripts side by side
 * with those of <git rev> (default: this tree's parent of the ack change, 29dc560, whose
 * ack.lua answered an array of 'acked' / 'stale' / 'not_found' strings, and a8a004c^, whose
 * cancel.lua answered one character per id without topics), on one throwaway redis-server,
 * in alternating rounds over disjoint tasks of one shard. Each round is 2,000 calls of 3
 * ids (the size concurrent single acks and cancels coalesce to per shard, ADR 0011) and
 * 100 calls of 60 ids (ackMany / cancelMany); it reports Redis' own time per call
 * (INFO commandstats, usec_per_call of evalsha: the script, its reply included, without
 * the network or the client), so the load of the machine moves it less than wall time.
 * The median of the rounds is printed.
 */
import { execFileSync } from 'node:child_process';
import { Redis } from 'ioredis';
import { openStore } from '../src/stores/open-store.js';
import { buildKeyspace } from '../src/stores/redis/keys.js';
import { resolveIncludes } from '../src/stores/shared/includes.js';
import { loadScript } from '../src/stores/redis/scripts.js';
import { startRedis } from '../test/helpers/redis-servers.js';
import { printTable } from './report.js';

const PREFIX = 'rb';

function scriptAt(rev: string, name: string): string {
  const read = (path: string): string => execFileSync('git', ['show', `${rev}:src/stores/redis/lua/${path}`], { encoding: 'utf8' });
  return resolveIncludes(read(`${name}.lua`), (include) => read(`includes/${include}.lua`));
}

async function evalshaMicros(admin: Redis, run: () => Promise<void>): Promise<number> {
  await admin.config('RESETSTAT');
  await run();
  const info = await admin.info('commandstats');
  const line = /cmdstat_evalsha:calls=(\d+),usec=(\d+)/.exec(info);
  if (!line) throw new Error('no evalsha in commandstats');
  return Number(line[2]) / Number(line[1]);
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(args: string[]): Promise<void> {
  const rounds = Number(args[args.indexOf('--rounds') + 1] ?? 5) || 5;
  const against = args.includes('--against') ? args[args.indexOf('--against') + 1]! : null;
  const server = await startRedis();
  const admin = new Redis(server.url);
  const store = await openStore(`${server.url}`, { prefix: PREFIX, shards: 1 });
  try {
    const shard = buildKeyspace(PREFIX, 1).shards[0]!;
    const keys = [shard.pool, shard.delayed, shard.reserved, shard.dead, shard.done, shard.counts];
    const versions = {
      ack: { old: scriptAt(against ?? '29dc560', 'ack'), new: loadScript('ack').source },
      cancel: { old: scriptAt(against ?? 'a8a004c^', 'cancel'), new: loadScript('cancel').source },
    };
    const shas: Record<string, string> = {};
    for (const [name, pair] of Object.entries(versions))
      for (const [which, source] of Object.entries(pair)) shas[`${name}/${which}`] = (await admin.script('LOAD', source)) as string;

    const perRound = 2_000 * 3 + 100 * 60;
    let serial = 0;
    const fresh = async (n: number, reserve: boolean): Promise<{ id: string; receipt: string }[]> => {
      const now = Date.now();
      const ids = Array.from({ length: n }, () => `t${(serial++).toString(36)}`);
      for (let i = 0; i < n; i += 1_000)
        await store.tasks.schedule(ids.slice(i, i + 1_000).map((id) => ({ id, topic: 'bench.topic', payload: '{"p":1}', runAt: reserve ? now : now + 3_600_000, maxAttempts: 3, ttrMs: 600_000, backoff: { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0 } })), now);
      if (!reserve) return ids.map((id) => ({ id, receipt: '' }));
      const out: { id: string; receipt: string }[] = [];
      for (let i = 0; i < n; i += 500) for (const r of await store.tasks.reserve(ids.slice(i, i + 500), now)) out.push({ id: r.id, receipt: r.receipt! });
      return out;
    };
    const calls = (name: 'ack' | 'cancel', which: 'old' | 'new', items: { id: string; receipt: string }[], size: number): Promise<void> => {
      const sha = shas[`${name}/${which}`]!;
      const callKeys = name === 'ack' ? keys : [...keys, shard.parked, shard.parkedCounts];
      const work: Promise<unknown>[] = [];
      for (let i = 0; i < items.length; i += size) {
        const chunk = items.slice(i, i + size);
        const argv = name === 'ack' ? [Date.now(), ...chunk.flatMap((a) => [a.id, a.receipt])] : [Date.now(), ...chunk.map((a) => a.id)];
        work.push(admin.evalsha(sha, callKeys.length, ...callKeys, ...argv));
      }
      return Promise.all(work).then(() => undefined);
    };
    const results: Record<string, number[]> = {};
    for (let round = 0; round < rounds; round++) {
      for (const name of ['ack', 'cancel'] as const) {
        for (const which of round % 2 === 0 ? (['old', 'new'] as const) : (['new', 'old'] as const)) {
          const items = await fresh(perRound, name === 'ack');
          const singles = items.slice(0, 6_000);
          const bulk = items.slice(6_000);
          (results[`${name} ${which} 3`] ??= []).push(await evalshaMicros(admin, () => calls(name, which, singles, 3)));
          (results[`${name} ${which} 60`] ??= []).push(await evalshaMicros(admin, () => calls(name, which, bulk, 60)));
        }
      }
    }
    const rows = (['ack', 'cancel'] as const).flatMap((name) =>
      ([3, 60] as const).map((size) => {
        const o = median(results[`${name} old ${size}`]!);
        const n = median(results[`${name} new ${size}`]!);
        return [`${name}.lua, calls of ${size} ids`, o.toFixed(1), n.toFixed(1), `${(((n - o) / o) * 100).toFixed(1)}%`];
      }),
    );
    printTable({
      title: `Redis time per script call (usec, median of ${rounds} rounds; old = ${against ?? 'ack 29dc560, cancel a8a004c^'})`,
      columns: ['script', 'old', 'this tree', 'change'],
      rows,
    });
  } finally {
    await store.close();
    admin.disconnect();
    await server.stop();
    server.remove();
  }
}
