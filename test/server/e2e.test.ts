// End to end: the real `delayq serve` on a SQLite file on an ephemeral port, driven by the
// client and the CLI; SIGTERM during a long-poll and during batches loses nothing.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DelayQClient, isDelayQClientError } from '../../src/client/index.js';
import { runCliProcess, spawnServer } from '../helpers/service-process.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-e2e-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function allIds(client: DelayQClient): Promise<Set<string>> {
  const ids = new Set<string>();
  let afterId: string | undefined;
  for (;;) {
    const page = await client.list({ limit: 10_000, ...(afterId ? { afterId } : {}) });
    for (const task of page) ids.add(task.id);
    if (page.length < 10_000) return ids;
    afterId = page.at(-1)!.id;
  }
}

describe('delayq serve (spawned, SQLite)', () => {
  it('serves the API to the client and the CLI, with a token, and keeps tasks across a restart', async () => {
    const store = `sqlite:${join(dir, 'a.db')}`;
    const server = await spawnServer(['--store', store], { DELAYQ_TOKEN: 'e2e-token' });
    try {
      assert.match(server.address, /^http:\/\/127\.0\.0\.1:\d+$/);
      const client = new DelayQClient({ url: server.address, token: 'e2e-token' });
      assert.equal((await client.stats()).store, store);
      await assert.rejects(new DelayQClient({ url: server.address }).stats(), (e: unknown) => isDelayQClientError(e, 'UNAUTHORIZED'));
      assert.equal((await client.schedule({ id: 'e1', topic: 'jobs', payload: { a: 1 } })).created, true);
      const [delivery] = await client.reserve('jobs', { waitMs: 2_000 });
      assert.equal(delivery?.id, 'e1');
      await client.ack(delivery.id, delivery.receipt);
      assert.equal((await client.get('e1'))?.state, 'completed');

      const cli = (...args: string[]) => runCliProcess(['--server', server.address, '--token', 'e2e-token', ...args]);
      const added = await cli('add', 'jobs', '--id', 'e2', '--delay', '1h', '--payload', '{"b":2}', '--json');
      assert.equal(added.code, 0, added.stderr);
      assert.equal((JSON.parse(added.stdout) as { id: string }).id, 'e2');
      const [got, denied] = await Promise.all([cli('get', 'e2', '--json'), runCliProcess(['--server', server.address, 'stats'])]);
      assert.deepEqual((JSON.parse(got.stdout) as { payload: unknown }).payload, { b: 2 });
      assert.equal(denied.code, 1);
      assert.match(denied.stderr, /UNAUTHORIZED/);
    } finally {
      assert.equal(await server.stop(), 0);
    }
    const again = await spawnServer(['--store', store, '--token', 'e2e-token']);
    try {
      const client = new DelayQClient({ url: again.address, token: 'e2e-token' });
      assert.equal((await client.get('e2'))?.state, 'pending');
      assert.equal((await client.get('e1'))?.state, 'completed');
    } finally {
      assert.equal(await again.stop(), 0);
    }
  });

  it('SIGTERM during a long-poll: the poll answers at once, the server exits 0, nothing is lost', async () => {
    const store = `sqlite:${join(dir, 'b.db')}`;
    const server = await spawnServer(['--store', store]);
    const client = new DelayQClient({ url: server.address });
    await client.schedule({ id: 'later', topic: 'lp', delayMs: 3_600_000 });
    const polling = client.reserve('lp', { waitMs: 30_000 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    const started = Date.now();
    const exit = server.stop('SIGTERM');
    assert.deepEqual(await polling, []);
    assert.equal(await exit, 0);
    assert.ok(Date.now() - started < 5_000, 'the long-poll held the shutdown');
    const again = await spawnServer(['--store', store]);
    try {
      assert.equal((await new DelayQClient({ url: again.address }).get('later'))?.state, 'pending');
    } finally {
      await again.stop();
    }
  });

  it('SIGTERM during batches: every task in an accepted batch is stored', async () => {
    const store = `sqlite:${join(dir, 'c.db')}`;
    const server = await spawnServer(['--store', store]);
    const client = new DelayQClient({ url: server.address });
    const accepted: string[] = [];
    let refused = 0;
    let batchNo = 0;
    let signalled = false;
    let signalledAt = 0;
    const loop = async (): Promise<void> => {
      while (!signalled || batchNo < 1_000) {
        const n = batchNo++;
        const tasks = Array.from({ length: 2_000 }, (_, i) => ({ id: `b${n}-${i}`, topic: 'bulk', delayMs: 3_600_000, payload: { n, i } }));
        try {
          const results = await client.scheduleMany(tasks);
          for (const r of results) if ('id' in r) accepted.push(r.id);
        } catch {
          refused++;
          return;
        }
        if (!signalled && accepted.length >= 8_000) {
          signalled = true;
          signalledAt = Date.now();
          server.child.kill('SIGTERM');
        }
      }
    };
    await Promise.all([loop(), loop(), loop(), loop()]);
    assert.equal(await server.exited, 0);
    // Connections busy when the stop began are closed after their answer, not left on keep-alive.
    assert.ok(Date.now() - signalledAt < 5_000, `stop took ${Date.now() - signalledAt} ms`);
    assert.ok(refused > 0, 'some batch should have met the shutdown');
    const again = await spawnServer(['--store', store]);
    try {
      const stored = await allIds(new DelayQClient({ url: again.address }));
      const lost = accepted.filter((id) => !stored.has(id));
      assert.deepEqual(lost.slice(0, 5), [], `${lost.length} of ${accepted.length} accepted tasks lost`);
      assert.ok(accepted.length >= 8_000);
    } finally {
      await again.stop();
    }
  });
});
