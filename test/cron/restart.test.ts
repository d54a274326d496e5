/**
 * A schedule every second on a SQLite file, across a SIGKILL and a restart, with each
 * misfire policy: the occurrences created before the kill fire (late), the missed ones are
 * skipped, fired once or all fired, none twice, none early, and every one created is acked.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { MisfirePolicy } from '../../src/core/schedule/model.js';
import { openStore } from '../../src/stores/open-store.js';

interface Child {
  readonly process: ChildProcess;
  readonly lines: string[];
  readonly exited: Promise<void>;
  waitFor(prefix: string): Promise<string>;
}

function start(args: string[]): Child {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/cron/fixtures/sqlite-child.ts', ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  const lines: string[] = [];
  const waiters: Array<{ prefix: string; resolve: (line: string) => void }> = [];
  createInterface({ input: child.stdout }).on('line', (line) => {
    lines.push(line);
    for (const w of [...waiters]) if (line.startsWith(w.prefix)) {
      waiters.splice(waiters.indexOf(w), 1);
      w.resolve(line);
    }
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    process: child,
    lines,
    exited,
    waitFor: (prefix) => {
      const seen = lines.find((l) => l.startsWith(prefix));
      return seen !== undefined ? Promise.resolve(seen) : new Promise((resolve) => waiters.push({ prefix, resolve }));
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'delayq-cron-restart-'));
const children: Child[] = [];

// The three policies run at once, each on a file and processes of its own: about 25 s in all instead of 70.
describe('a schedule on SQLite across a SIGKILL and a restart', { concurrency: true }, () => {
  after(() => {
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  for (const misfire of ['skip', 'once', 'all'] as MisfirePolicy[]) {
    it(`misfire ${misfire}`, { timeout: 60_000 }, async () => {
      const path = join(dir, `${misfire}.db`);
      // The first process picks the start once its queue is open: a start fixed before it
      // spawned passed, on a loaded machine, before it opened, and occurrence 0 was missed.
      const first = start([path, misfire, 'auto', '60000']);
      children.push(first);
      const startAt = Number((await first.waitFor('START')).split(' ')[1]);
      await first.waitFor('READY');
      // Kill after ~4 occurrences (up to ~2 s more are created ahead), stay down 6 s.
      await sleep(Math.max(0, startAt + 3_700 - Date.now()));
      first.process.kill('SIGKILL');
      await first.exited;
      await sleep(6_000);
      const second = start([path, misfire, String(startAt), '2500']);
      children.push(second);
      const state = Number((await second.waitFor('STATE')).split(' ')[1]);
      const opened = Number((await second.waitFor('OPEN')).split(' ')[1]);
      await second.exited;

      // What the restart plans: occurrences before nextAt were created before the kill;
      // missed = nextAt ... < opened - grace (1 s); the open is mid-second, so no occurrence is near the line.
      const all = Array.from({ length: 16 }, (_, i) => startAt + i * 1_000);
      const missed = all.filter((t) => t >= state && t < opened - 1_000);
      assert.ok(missed.length >= 2, `missed ${missed.length}: the downtime must cover some occurrences`);
      const expected = misfire === 'all' ? all : all.filter((t) => !missed.includes(t) || (misfire === 'once' && t === missed[missed.length - 1]));

      const acks = [...first.lines, ...second.lines].filter((l) => l.startsWith('A ')).map((l) => l.split(' '));
      const ackedIds = acks.map((a) => a[1]!);
      assert.equal(new Set(ackedIds).size, ackedIds.length, 'no occurrence acked twice');
      for (const [, , runAt, at] of acks) assert.ok(Number(at) >= Number(runAt), 'never early');

      const store = await openStore(`sqlite:${path}`);
      try {
        const tasks = (await store.tasks.list({ topic: 'tick', limit: 100 })).map((t) => [Number(t.id.split(':')[1]), t.state] as const).sort((a, b) => a[0] - b[0]);
        assert.deepEqual(tasks.map(([t]) => t - startAt), expected.map((t) => t - startAt), `tasks created (misfire ${misfire}, missed ${missed.map((t) => t - startAt).join(',')})`);
        for (const [t, s] of tasks) assert.equal(s, 'completed', `occurrence ${t - startAt} acked`);
      } finally {
        await store.close();
      }
    });
  }
});
