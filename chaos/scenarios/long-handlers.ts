import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../src/open-queue.js';
import { undelivered } from '../checker.js';
import { exclusivity, type Fault } from '../exclusive.js';
import { spawnWorker, stopWorker } from '../processes.js';
import { base, readFacts, type Round, type Row, type Run, scenario, type Scenario } from '../round.js';
import { withPostgres, withRedis } from '../servers.js';

/** The tasks' ttr: every handler takes 3 to 10 times it, renewed while it runs. */
const TTR_MS = 500;
/** How long one process is frozen: longer than a ttr (six of them), shorter than its shard leases (5 s). */
const STOP_MS = 3_000;

/**
 * Long handlers (issue 46): three processes on one Redis (or PostgreSQL) run `work` handlers that take 3-10x
 * their ttr, in steps of 100 ms, each looking at its signal before a step and acking itself.
 * One process is frozen (SIGSTOP) for STOP_MS, past the ttr of every reservation it holds,
 * and another is SIGKILLed. Beside the checker's promises (nothing lost, nothing early),
 * exclusive.ts judges that no task ran in two places at once: a second run of a task starts
 * only once the first was told to stop, or while its process was frozen (and it stopped at its
 * first look when it woke) or dead. The drain here waits for every task to be acked, not
 * only delivered: a handler still running when the workers stop would be given back.
 */
async function longHandlers(run: Run, kind: 'redis' | 'postgres'): Promise<Row> {
  const name = `${kind}: long handlers, SIGSTOP + SIGKILL`;
  const faults = `handlers 3-10x their ttr (${TTR_MS} ms), renewed; one of 3 processes frozen ${STOP_MS / 1000} s (> its ttr), another SIGKILLed`;
  return scenario(run, name, faults, 'clean', (round) =>
    kind === 'redis' ? withRedis({}, (redis) => faultsAndVerdict(run, round, `${redis.url}?prefix=lh&shards=16`)) : withPostgres(round, (_cluster, store) => faultsAndVerdict(run, round, store)),
  );
}

/** The three processes on `store`, the freeze and the kill, and the verdict of exclusive.ts (thrown when broken). */
async function faultsAndVerdict(run: Run, round: Round, store: string): Promise<void> {
  const work = { minFactor: 3, maxFactor: 10, stepMs: 100, concurrency: 60 };
  const workers = [0, 1, 2].map((i) => spawnWorker(base(store, `l${i}`, { rate: 12, ttrMs: TTR_MS, maxDelayMs: 1_000, work }), round));
  await Promise.all(workers.map((w) => w.ready));
  const injected: Fault[] = [];
  await sleep(run.short ? 3_000 : 5_000);
  const stopped = Date.now();
  workers[0]!.signal('SIGSTOP');
  await sleep(STOP_MS);
  workers[0]!.signal('SIGCONT');
  injected.push({ worker: 'l0', kind: 'stop', from: stopped, to: Date.now() });
  await sleep(run.short ? 2_000 : 4_000);
  injected.push({ worker: 'l1', kind: 'kill', from: Date.now(), to: Infinity });
  workers[1]!.signal('SIGKILL');
  await sleep(run.short ? 2_000 : 5_000);
  for (const w of [workers[0]!, workers[2]!]) w.signal('SIGUSR2');
  await untilAcked(round, 'l1', 60_000);
  await Promise.all([workers[0]!, workers[2]!].map(stopWorker));
  readFacts(round);
  const verdict = exclusivity(round.workerFacts, injected, TTR_MS);
  // A task whose ack answer never came back is judged by the store: the killed process may
  // have sent its ack (a K line) and died before the answer; then the task is completed.
  const acked = new Set(round.facts.acks.map((a) => a.id));
  const unanswered = [...round.facts.scheduled.keys()].filter((id) => !acked.has(id));
  const completed = await completedIn(store, unanswered);
  const unacked = unanswered.filter((id) => !completed.has(id));
  if (completed.size > 0) round.notes.push(`${completed.size} tasks acked by the killed process, the answer lost with it (completed in the store): ${[...completed].slice(0, 5).join(', ')}`);
  round.notes.push(
    `${verdict.runs} handler runs, ${verdict.pastTtr} acked after running past their ttr (the longest ${verdict.longest.toFixed(1)}x it); ` +
      `tasks run again: ${verdict.handedOver} after the first's signal had aborted (as of its lapse, for a reservation lost; by the first's process: ${[...verdict.handedOverBy].map(([w, n]) => `${w} ${n}`).join(', ')}), ${verdict.frozen} while the first holder was frozen (it stopped when it woke), ${verdict.killed} after it was killed; ` +
      `ran in two places at once: ${verdict.violations.length}; acknowledged but never acked: ${unacked.length}`,
  );
  // Where a task never acked stands in the store (PostgreSQL: its row), for the kept round.
  if (unacked.length > 0 && round.pg !== null)
    for (const s of await round.pg.probe.standings(unacked.slice(0, 10), Date.now()).catch(() => [])) round.notes.push(`${s.id}: ${s.reading}; row ${JSON.stringify(s.row)}`);
  const problems = [...verdict.violations.slice(0, 10)];
  if (unacked.length > 0) problems.push(`${unacked.length} tasks never acked (${unacked.slice(0, 5).join(', ')})`);
  if (verdict.pastTtr === 0) problems.push('no handler ran past its ttr: the scenario did not test renewal');
  if (verdict.takenOver === 0) problems.push('no task of the frozen or the killed process was run again: the faults tested nothing');
  if (problems.length > 0) throw new Error(problems.join('; '));
}

/** Which of `ids` the store holds completed (read through a queue of the runner's own, at most 200). */
async function completedIn(store: string, ids: readonly string[]): Promise<Set<string>> {
  const completed = new Set<string>();
  if (ids.length === 0) return completed;
  const queue = await DelayQueue.open({ store });
  try {
    for (const id of ids.slice(0, 200)) if ((await queue.get(id))?.state === 'completed') completed.add(id);
  } finally {
    await queue.close();
  }
  return completed;
}

/**
 * Waits until every acknowledged schedule was acked by a handler, or its ack was sent by the
 * `killed` worker (its answer died with it: the store says, after), or `maxMs` passed: long
 * handlers still running would be given back at the stop.
 */
async function untilAcked(round: Round, killed: string, maxMs: number): Promise<void> {
  const deadline = Date.now() + maxMs;
  while (Date.now() < deadline) {
    await sleep(250);
    readFacts(round);
    const settled = new Set([...round.facts.acks, ...(round.workerFacts.get(killed)?.done ?? [])].map((a) => a.id));
    if (undelivered(round.facts).length === 0 && [...round.facts.scheduled.keys()].every((id) => settled.has(id))) return;
  }
}

export const longHandlersScenario: Scenario = { name: 'long-handlers', needs: 'redis', run: (run) => longHandlers(run, 'redis') };
export const pgLongHandlersScenario: Scenario = { name: 'pg-long-handlers', needs: 'postgres', run: (run) => longHandlers(run, 'postgres') };
