// The first push after a start is as punctual as the rest: what a push needs is made ready
// when a push url becomes known, before its first task is due. Checked without timing: on
// the queue's ManualClock, the transport is asked to warm up before any time has passed.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { DelayQueue } from '../../src/open-queue.js';
import { storeSystemClock } from '../../src/stores/system-clock.js';
import { T0, flush } from '../helpers/engine.js';
import { ScriptedTransport, testSigner } from '../helpers/push.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-warm-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('push warm-up', () => {
  it('a restarted queue warms each subscription it reads from the store before its first task is due', async () => {
    const store = `sqlite:${join(dir, 'warm.db')}`;
    const url = 'https://hooks.example.com/orders';
    const first = await DelayQueue.open({ store, storeOptions: { clock: storeSystemClock }, clock: new ManualClock(T0), push: { transport: new ScriptedTransport(new ManualClock(T0)), signer: testSigner } });
    await first.setPush('orders', { url });
    await first.schedule({ id: 'later', topic: 'orders', payload: null, delayMs: 60_000 });
    await first.close();

    const clock = new ManualClock(T0);
    const transport = new ScriptedTransport(clock);
    const q = await DelayQueue.open({ store, storeOptions: { clock: storeSystemClock }, clock, push: { transport, signer: testSigner } });
    try {
      await flush();
      assert.deepEqual(transport.warmed, [url], 'warmed at start');
      assert.equal(transport.sent.length, 0, 'and nothing is due yet');
      clock.advance(60_000);
      await flush();
      assert.equal(transport.sent.length, 1);
      assert.equal(transport.sent[0]?.at, T0 + 60_000);
    } finally {
      await q.close();
    }
  });

  it('a restarted queue warms the push transport for the tasks with their own url it loads, before the first is due', async () => {
    const store = `sqlite:${join(dir, 'warm-urls.db')}`;
    const url = 'https://hooks.example.com/own';
    const options = { pushSecret: 'whsec_' + Buffer.alloc(32, 7).toString('base64') };
    const first = await DelayQueue.open({ store, storeOptions: { clock: storeSystemClock }, clock: new ManualClock(T0), ...options, push: { transport: new ScriptedTransport(new ManualClock(T0)), signer: testSigner } });
    await first.scheduleMany([
      { id: 'own-1', topic: 'plain', payload: null, delayMs: 30_000, url },
      { id: 'own-2', topic: 'plain', payload: null, delayMs: 40_000, url: 'https://other.example.com/x' },
    ]);
    await first.close();

    const clock = new ManualClock(T0);
    const transport = new ScriptedTransport(clock);
    const q = await DelayQueue.open({ store, storeOptions: { clock: storeSystemClock }, clock, ...options, push: { transport, signer: testSigner } });
    try {
      await flush();
      // One read per start: the first loaded task's url; the transport is loaded for all.
      assert.equal(transport.warmed.length, 1, `warmed once at start: ${JSON.stringify(transport.warmed)}`);
      assert.match(transport.warmed[0]!, /^https:\/\/(hooks|other)\.example\.com\//);
      assert.equal(transport.sent.length, 0, 'and nothing is due yet');
      clock.advance(30_000);
      await flush();
      assert.equal(transport.sent.length, 1);
      assert.equal(transport.sent[0]?.at, T0 + 30_000);
    } finally {
      await q.close();
    }
  });

  it('a changed subscription warms its new url', async () => {
    const clock = new ManualClock(T0);
    const transport = new ScriptedTransport(clock);
    const q = await DelayQueue.open({ store: 'memory', clock, push: { transport, signer: testSigner } });
    try {
      await q.setPush('orders', { url: 'https://a.example.com/in' });
      await flush();
      await q.setPush('orders', { url: 'https://b.example.com/in' });
      await flush();
      assert.deepEqual(transport.warmed, ['https://a.example.com/in', 'https://b.example.com/in']);
    } finally {
      await q.close();
    }
  });
});
