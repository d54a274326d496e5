// A crash test that really crashes: a child process schedules and consumes on one SQLite
// file, and this test SIGKILLs it at random moments, restarting it each time. At the end:
// every task whose schedule() resolved was delivered at least once, none before its
// runAt, and none after its ack was committed. Redeliveries of tasks whose handler
// started but whose ack was not yet committed are what at-least-once allows; they are
// counted and printed, not failed. Real time and real processes: this is a process test.
//
// The child's facts come through a file (src/testing/facts-file.ts), not its stdout: once
// this process falls behind reading a pipe (a loaded machine), the child's later writes wait
// in its memory and die with its SIGKILL, and a handler start lost that way, whose ack then
// committed, would read as an acknowledged schedule never delivered.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { FactsTail } from '../../../src/testing/facts-file.js';

const child = join(import.meta.dirname, 'fixtures', 'crash-child.ts');
const KILLS = 24;
const PARK_KILLS = 20;
/** The drain generation ends once nothing acknowledged is missing, after its minimum, or at this. */
const MAX_DRAIN_MS = 30_000;

interface Events {
  readonly scheduled: Map<string, number>;
  readonly starts: Map<string, { at: number; attempt: number; runAt: number; afterAck: boolean }[]>;
  readonly acked: Set<string>;
  readonly errors: string[];
}

function record(events: Events, line: string): void {
  const [kind, id = '', a = '', b = '', c = ''] = line.split(' ');
  if (kind === 'S') events.scheduled.set(id, Number(a));
  else if (kind === 'H') {
    const list = events.starts.get(id) ?? [];
    list.push({ at: Number(a), attempt: Number(b), runAt: Number(c), afterAck: events.acked.has(id) });
    events.starts.set(id, list);
  } else if (kind === 'A') events.acked.add(id);
  else if (kind === 'E') events.errors.push(line);
}

const missingOf = (events: Events): string[] => [...events.scheduled.keys()].filter((id) => !events.starts.has(id));

/**
 * Runs one child generation. 'run': SIGKILLed `lifeMs` after it is ready. 'drain': runs at
 * least `lifeMs`, then until every acknowledged schedule was delivered or MAX_DRAIN_MS, and
 * is stopped by SIGTERM (a machine too busy to deliver within `lifeMs` does not fail the test).
 */
function generation(path: string, gen: number, mode: 'run' | 'drain', lifeMs: number, events: Events, park: boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const factsFile = `${path}-facts-${gen}.log`;
    const tail = new FactsTail(factsFile);
    const read = (lines: string[]): void => lines.forEach((line) => record(events, line));
    const proc = spawn(process.execPath, ['--import', 'tsx', child, path, factsFile, String(gen), mode, String(MAX_DRAIN_MS + 10_000), ...(park ? ['park'] : [])], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const reader = setInterval(() => read(tail.poll()), 100);
    const drainUntil = (deadline: number): void => {
      read(tail.poll());
      if (missingOf(events).length === 0 || Date.now() >= deadline) proc.kill('SIGTERM');
      else setTimeout(() => drainUntil(deadline), 250);
    };
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => {
      if (out.includes('ready\n')) return;
      out += chunk;
      if (!out.includes('ready\n')) return;
      if (mode === 'run') setTimeout(() => proc.kill('SIGKILL'), lifeMs);
      else setTimeout(() => drainUntil(Date.now() - lifeMs + MAX_DRAIN_MS), lifeMs);
    });
    proc.once('error', reject);
    // A line cut by the kill was never fully written: the tail drops it, as it should.
    proc.once('close', (code, signal) => {
      clearInterval(reader);
      read(tail.close());
      if (mode === 'run' && signal !== 'SIGKILL') reject(new Error(`generation ${gen} ended by itself (${String(code)})`));
      else if (mode === 'drain' && code !== 0) reject(new Error(`drain generation exited with ${String(code)}`));
      else resolve();
    });
  });
}

/**
 * Runs `kills` generations that are SIGKILLed at random, then one that drains, and checks
 * the invariants over everything they reported. `park`: see the child.
 */
async function crashRun(path: string, kills: number, park: boolean): Promise<void> {
  const events: Events = { scheduled: new Map(), starts: new Map(), acked: new Set(), errors: [] };
  const started = Date.now();
  for (let gen = 0; gen < kills; gen++) await generation(path, gen, 'run', 100 + Math.floor(Math.random() * 900), events, park);
  // The last generation only consumes: at least long enough for the longest delay (400 ms,
  // or 4 s when parking) plus an expired reservation (TTR 1 s) to come round, then closes.
  await generation(path, kills, 'drain', park ? 7_000 : 4_000, events, park);

  const missing = missingOf(events);
  const early: string[] = [];
  const afterAck: string[] = [];
  let duplicates = 0;
  for (const [id, starts] of events.starts) {
    const runAt = events.scheduled.get(id);
    duplicates += starts.length - 1;
    for (const start of starts) {
      if (start.at < start.runAt || (runAt !== undefined && start.at < runAt)) early.push(`${id}@${start.at}<${runAt ?? start.runAt}`);
      if (start.afterAck) afterAck.push(id);
    }
  }
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(
    `crash test${park ? ' (parking)' : ''}: ${kills} kills in ${seconds}s; ${events.scheduled.size} schedules acknowledged, ` +
      `${events.starts.size} tasks delivered, ${events.acked.size} acks committed, ` +
      `${duplicates} duplicate deliveries (at-least-once), ${missing.length} missing`,
  );
  assert.deepEqual(events.errors, []);
  assert.ok(events.scheduled.size >= 1_000, `too little traffic to mean anything (${events.scheduled.size})`);
  assert.ok(events.acked.size >= events.scheduled.size / 2, `too few acks seen to judge redeliveries after them (${events.acked.size})`);
  assert.deepEqual(missing.slice(0, 10), [], `${missing.length} acknowledged schedules never delivered`);
  assert.deepEqual(early.slice(0, 10), [], 'delivered before runAt');
  assert.deepEqual(afterAck.slice(0, 10), [], 'delivered again after the ack was committed');
  if (park) {
    // Runs are numbered by AUTOINCREMENT: the counter says how many were ever filed.
    const db = new Database(path, { readonly: true });
    const runs = db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'parked_runs'").pluck().get() as number | undefined;
    db.close();
    console.log(`crash test (parking): ${runs ?? 0} runs of parked tasks filed`);
    assert.ok((runs ?? 0) >= 50, `parking was hardly exercised (${runs ?? 0} runs)`);
  }
}

describe('sqlite store: crash safety', () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-crash-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it(`loses no acknowledged schedule and redelivers no acknowledged ack across ${KILLS} SIGKILLs`, { timeout: 120_000 }, async () => {
    await crashRun(join(dir, 'crash.db'), KILLS, false);
  });

  it(`the same across ${PARK_KILLS} SIGKILLs while far tasks are parked and unparked`, { timeout: 120_000 }, async () => {
    await crashRun(join(dir, 'crash-park.db'), PARK_KILLS, true);
  });
});
