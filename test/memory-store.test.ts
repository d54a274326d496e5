import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MemoryStore } from '../src/stores/memory/memory-store.js';
import { runStoreConformance, task } from './conformance/store-conformance.js';

runStoreConformance('memory', () => Promise.resolve({ store: new MemoryStore() }));

describe('memory store receipts', () => {
  it('accept only the exact receipt of the current reservation, read without rebuilding it', async () => {
    const store = new MemoryStore();
    const at = Date.UTC(2030, 0, 1);
    await store.schedule([task('a', { runAt: at }), task('b', { runAt: at })], at);
    const [a, b] = await store.claim(['a', 'b'], at);
    const receipt = a!.receipt!;
    const other = b!.receipt!;
    const dot = receipt.indexOf('.');
    const forged = [
      `0${receipt}`, // leading zero on the attempt
      `2${receipt.slice(dot)}`, // another attempt
      `${receipt.slice(0, dot + 1)}x${receipt.slice(dot + 2)}`, // another nonce
      `${receipt.slice(0, -1)}0${receipt.slice(-1)}`, // another reservation number
      `${receipt.slice(0, -1)}${receipt.slice(-1).toUpperCase() === receipt.slice(-1) ? '!' : receipt.slice(-1).toUpperCase()}`,
      receipt.slice(dot + 1),
      other,
      '',
      '.',
    ];
    for (const bad of forged) assert.equal(await store.ack('a', bad, at + 1), 'stale', bad);
    assert.equal((await store.get('a'))?.receipt, receipt);
    assert.equal(await store.ack('a', receipt, at + 2), 'acked');
    assert.equal(await store.ack('b', other, at + 2), 'acked');
  });
});
