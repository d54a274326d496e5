/**
 * The processes a chaos run starts, tracked by PID so that nothing outlives it: chaos
 * workers (worker.ts), `delayq serve`, the background load and the PostgreSQL clusters,
 * and the rounds' temp directories. stopAllNow() is what the runner's SIGINT, SIGTERM and
 * exit handlers call: SIGKILL to every child still running, `pg_ctl stop -m immediate` on
 * every cluster's data dir, and the directories removed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { PgCluster } from '../test/helpers/postgres-cluster.js';
import { FactsTail } from '../src/testing/facts-file.js';
import type { Load } from './load.js';
import type { Round } from './round.js';
import type { WorkerConfig } from './worker.js';

export const ROOT = join(import.meta.dirname, '..');

/** Every worker and server running now, by PID, the load, the PostgreSQL clusters and the rounds' directories: what SIGINT must not leave behind. */
export const live = new Set<ChildProcess>();
export const loads = new Set<Load>();
export const roundDirs = new Set<string>();
/** Started by pg_ctl, in a session of their own: a Ctrl-C reaches them only through here. */
export const pgClusters = new Set<PgCluster>();

export function track(child: ChildProcess): void {
  live.add(child);
  child.once('exit', () => live.delete(child));
}

export function stopAllNow(): void {
  for (const child of live) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  for (const load of loads) load.killNow();
  // pg_ctl stop -m immediate on each cluster's data dir (synchronous), then its directory goes.
  for (const cluster of pgClusters) cluster.remove();
  for (const dir of roundDirs) rmSync(dir, { recursive: true, force: true });
}

/** SIGKILL to whatever still runs, awaited: a failed round's processes must not run into the next. */
export async function killAllLive(): Promise<void> {
  await Promise.all([...live].map((child) => new Promise<void>((resolve) => (child.once('exit', () => resolve()), child.kill('SIGKILL')))));
}

export interface Worker {
  readonly child: ChildProcess;
  readonly ready: Promise<void>;
  readonly exited: Promise<void>;
  signal(signal: NodeJS.Signals): void;
  /** What it wrote to stderr (the first 10 kB). */
  stderr(): string;
}

/** Throws if a worker exited by itself (a crash of the process under test, not a fault injected). */
export function assertAlive(workers: readonly Worker[]): void {
  for (const w of workers)
    if (w.child.exitCode !== null || w.child.signalCode !== null)
      throw new Error(`a chaos worker exited by itself (${w.child.exitCode ?? w.child.signalCode}): ${w.stderr()}`);
}

/** The program a worker runs: worker.ts on this Node (delayq), or another (pgboss-worker.ts on Node 24). */
export interface WorkerProgram {
  readonly node: string;
  readonly script: string;
}

const DELAYQ_WORKER: WorkerProgram = { node: process.execPath, script: join(ROOT, 'chaos/worker.ts') };

export function spawnWorker(config: Omit<WorkerConfig, 'factsFile'>, round: Round, program: WorkerProgram = DELAYQ_WORKER): Worker {
  const factsFile = join(round.dir, `facts-${config.idPrefix}.log`);
  // CHAOS_WORKER_LOG=1: each worker's queue logs (debug and up) to log-<idPrefix>.log beside its facts.
  const logFile = process.env['CHAOS_WORKER_LOG'] === '1' ? { logFile: join(round.dir, `log-${config.idPrefix}.log`) } : {};
  round.tails.push({ worker: config.idPrefix, tail: new FactsTail(factsFile) });
  const child = spawn(program.node, ['--import', 'tsx', program.script], {
    cwd: ROOT,
    env: { ...process.env, CHAOS_WORKER: JSON.stringify({ ...config, factsFile, ...logFile } satisfies WorkerConfig) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => void (stderr.length < 10_000 && (stderr += chunk.toString())));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  round.stderr.set(config.idPrefix, () => stderr);
  const ready = new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line === 'R') resolve();
    });
    void exited.then(() => reject(new Error(`chaos worker exited before it was ready: ${stderr}`)));
  });
  ready.catch(() => undefined);
  return {
    child,
    ready,
    exited,
    signal(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    },
    stderr: () => stderr,
  };
}

export async function stopWorker(worker: Worker): Promise<void> {
  worker.signal('SIGCONT');
  worker.signal('SIGTERM');
  const timer = setTimeout(() => worker.signal('SIGKILL'), 5_000);
  await worker.exited;
  clearTimeout(timer);
}

export interface Server {
  readonly exited: Promise<void>;
  kill(): Promise<void>;
  stop(): Promise<void>;
}

/** `delayq serve` on a fixed port, so its clients find it again after a restart. */
export async function spawnServer(store: string, port: number): Promise<Server> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--host', '127.0.0.1', '--port', String(port), '--store', store], {
    cwd: ROOT,
    env: { ...process.env, DELAYQ_TOKEN: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let logs = '';
  child.stderr.on('data', (chunk: Buffer) => void (logs.length < 10_000 && (logs += chunk.toString())));
  await new Promise<void>((resolve, reject) => {
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.includes('"delayq listening"')) resolve();
      else if (logs.length < 10_000) logs += `${line}\n`;
    });
    void exited.then(() => reject(new Error(`delayq serve exited before listening:\n${logs}`)));
  });
  const send = async (signal: NodeJS.Signals): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return { exited, kill: () => send('SIGKILL'), stop: () => send('SIGTERM') };
}
