/**
 * What the chaos workers (worker.ts for delayq, pgboss-worker.ts for pg-boss) share: their
 * config from CHAOS_WORKER, the facts file and its lines, the producing rate (followed from
 * rateFile, paced in batches of at most 1,000), SIGUSR2 (stop producing) and SIGTERM (close,
 * then exit).
 */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { appendFacts, openFacts } from '../src/testing/facts-file.js';
import type { WorkerConfig } from './worker.js';

export interface WorkerKit {
  readonly config: WorkerConfig;
  /** Whether producers go on (SIGUSR2 stops them) and whether anything goes on (SIGTERM). */
  readonly state: { producing: boolean; running: boolean };
  /** Appends fact lines (each with its newline) with one write that has returned. */
  out(text: string): void;
  /** A rejected call: `E <op> <code> <at> <ms>`. */
  failed(op: string, code: string, since: number): void;
  /** A call that succeeded: a `C` line when it took slowCallMs or more (less `excludedMs`, a wait by design). */
  slow(op: string, since: number, excludedMs?: number): void;
  /** How many tasks to schedule now: what the rate owes since the last call, at most 1,000 (a batch). */
  owed(): number;
  /** runAt for a task scheduled now: now + [minDelayMs, maxDelayMs]. */
  runAt(): number;
  /** On SIGTERM: stop, wait 400 ms for calls in flight, close, exit. */
  closeOnSigterm(close: () => Promise<unknown>): void;
}

export function workerKit(): WorkerKit {
  const config = JSON.parse(process.env['CHAOS_WORKER'] ?? '{}') as WorkerConfig;
  const facts = openFacts(config.factsFile);
  const out = (text: string): void => {
    if (text !== '') appendFacts(facts, text);
  };
  const state = { producing: config.rate > 0 || config.rateFile !== undefined, running: true };
  process.on('SIGUSR2', () => (state.producing = false));
  let rate = config.rate;
  if (config.rateFile !== undefined) {
    const file = config.rateFile;
    const read = (): void => {
      try {
        const text = readFileSync(file, 'utf8').trim();
        const value = Number(text);
        // An empty read is a write in progress: the rate holds.
        if (text !== '' && Number.isFinite(value) && value >= 0) rate = value;
      } catch {
        // Not written yet: the configured rate holds.
      }
    };
    read();
    setInterval(read, 250).unref();
  }
  // What the rate owes since the last batch, in whole tasks (the fractions carried over, a slow
  // call caught up on, up to a second's worth): a rate of 1,500/s is 75 a 50 ms tick.
  let owing = 0;
  let last = Date.now();
  const minDelayMs = config.minDelayMs ?? 0;
  return {
    config,
    state,
    out,
    failed(op, code, since) {
      const at = Date.now();
      out(`E ${op} ${code} ${at} ${at - since}\n`);
    },
    slow(op, since, excludedMs = 0) {
      if (config.slowCallMs === undefined) return;
      const at = Date.now();
      const ms = at - since - excludedMs;
      if (ms >= config.slowCallMs) out(`C ${op} ${at} ${ms}\n`);
    },
    owed() {
      const now = Date.now();
      owing = Math.min(owing + (rate * (now - last)) / 1000, Math.max(1, rate));
      last = now;
      const n = Math.min(1_000, Math.floor(owing));
      owing -= n;
      return n;
    },
    runAt: () => Date.now() + minDelayMs + Math.floor(Math.random() * (config.maxDelayMs - minDelayMs + 1)),
    closeOnSigterm(close) {
      let stopping = false;
      process.on('SIGTERM', () => {
        if (stopping) return;
        stopping = true;
        state.running = false;
        state.producing = false;
        void (async () => {
          await sleep(400);
          await close().catch(() => undefined);
          process.exit(0);
        })();
      });
    },
  };
}
