// A reservation resolves before its transaction commits (docs/sqlite.md, "Durability"): a
// crash in between loses the reservation, never the task. The task is pending again, the lost
// delivery's receipt is refused, and no attempt is counted for it. A reservation is committed
// by the next turn of the event loop. Real processes, killed with SIGKILL.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';

const child = join(import.meta.dirname, 'fixtures', 'reserve-crash-child.ts');

function crashAfterClaim(path: string, when: 'now' | 'after-turn'): Promise<string> {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['--import', 'tsx', child, path, when], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    proc.stdout.setEncoding('utf8');
    proc.stdout.on('data', (chunk: string) => (out += chunk));
    proc.once('error', reject);
    proc.once('close', (_code, signal) => {
      if (signal !== 'SIGKILL') reject(new Error(`child ended without the kill (${String(signal)})`));
      else resolve(out.trim());
    });
  });
}

describe('sqlite store: a crash right after a reservation', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-reserve-crash-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('before the commit: the task is pending again, the lost receipt is stale, no attempt counted', async () => {
    const path = join(dir, 'c.db');
    const lost = await crashAfterClaim(path, 'now');
    assert.notEqual(lost, 'none');
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      const row = await store.tasks.get('x');
      assert.equal(row?.state, 'pending');
      assert.equal(row?.attempts, 0);
      assert.equal((await store.tasks.stats()).byState.pending, 1, 'the counters agree');
      assert.equal((await store.tasks.ack('x', lost, Date.now())).status, 'stale', 'an ack of the lost delivery is refused');
      const [again] = await store.tasks.reserve(['x'], Date.now());
      assert.equal(again?.attempts, 1);
      assert.notEqual(again?.receipt, lost);
      assert.equal((await store.tasks.ack('x', again.receipt!, Date.now())).status, 'acked');
    } finally {
      await store.close();
    }
  });

  it('one event-loop turn later: the reservation is committed', async () => {
    const path = join(dir, 'c.db');
    const receipt = await crashAfterClaim(path, 'after-turn');
    const store = await openSqliteStore(path, { clock: storeSystemClock });
    try {
      const row = await store.tasks.get('x');
      assert.equal(row?.state, 'reserved');
      assert.equal(row?.attempts, 1);
      assert.equal((await store.tasks.ack('x', receipt, Date.now())).status, 'acked');
    } finally {
      await store.close();
    }
  });
});
