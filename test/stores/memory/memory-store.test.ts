import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ackEachOneByOne, cancelEachOneByOne } from '../../../src/core/batch-fallbacks.js';
import type { AckRequest, StoreAckOutcome, StoreCancelOutcome } from '../../../src/core/ports/index.js';
import { MemoryStore } from '../../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../../src/stores/memory/memory-tasks.js';
import { runStoreConformance, task } from '../../../src/testing/store-conformance/index.js';

runStoreConformance('memory', () => Promise.resolve({ store: new MemoryStore() }));

/** A tasks role with no batch path of its own: the shared fallbacks must keep the contract. */
class OneByOneTasks extends MemoryTasks {
  override ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    return ackEachOneByOne(this, acks, now);
  }
  override cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    return cancelEachOneByOne(this, ids, now);
  }
}
runStoreConformance('memory, batches one by one (core/batch-fallbacks.ts)', () => Promise.resolve({ store: new MemoryStore((assertOpen) => new OneByOneTasks(assertOpen)) }));

describe('memory store receipts', () => {
  it('accept only the exact receipt of the current reservation, read without rebuilding it', async () => {
    const store = new MemoryStore();
    const at = Date.UTC(2030, 0, 1);
    await store.tasks.schedule([task('a', { runAt: at }), task('b', { runAt: at })], at);
    const [a, b] = await store.tasks.reserve(['a', 'b'], at);
    const receipt = a!.receipt!;
    const other = b!.receipt!;
    const dot = receipt.indexOf('.');
    const forged = [
      `0${receipt}`, // leading zero on the attempt
      `2${receipt.slice(dot)}`, // another attempt
      `${receipt.slice(0, dot + 1)}${receipt[dot + 1] === 'x' ? 'y' : 'x'}${receipt.slice(dot + 2)}`, // another nonce (1 in 64 began with x: no forgery)
      `${receipt.slice(0, -1)}0${receipt.slice(-1)}`, // another reservation number
      `${receipt.slice(0, -1)}${receipt.slice(-1).toUpperCase() === receipt.slice(-1) ? '!' : receipt.slice(-1).toUpperCase()}`,
      receipt.slice(dot + 1),
      other,
      '',
      '.',
    ];
    for (const bad of forged) assert.equal((await store.tasks.ack('a', bad, at + 1)).status, 'stale', bad);
    assert.equal((await store.tasks.get('a'))?.receipt, receipt);
    assert.equal((await store.tasks.ack('a', receipt, at + 2)).status, 'acked');
    assert.equal((await store.tasks.ack('b', other, at + 2)).status, 'acked');
  });
});

describe('memory store reserveRefs', () => {
  it('reserves through the task its ref points at, so a ref that outlived its task reserves nothing', async () => {
    const store = new MemoryStore();
    const at = Date.UTC(2030, 0, 1);
    const [old] = await store.tasks.schedule([task('d', { runAt: at })], at - 10);
    const [first] = await store.tasks.reserveRefs([old!.ref!], at);
    assert.equal((await store.tasks.ack('d', first!.receipt!, at + 1)).status, 'acked');
    assert.equal(await store.tasks.purge(at + 2, 10), 1);
    const [fresh] = await store.tasks.schedule([task('d', { runAt: at + 100 })], at + 3);
    assert.equal(fresh!.created, true);
    assert.deepEqual(await store.tasks.reserveRefs([old!.ref!], at + 200), [], 'the purged task is not the new one');
    const [claimed] = await store.tasks.reserveRefs([fresh!.ref!], at + 200);
    assert.equal(claimed?.id, 'd');
    assert.equal(claimed?.runAt, at + 100);
  });
});

describe('memory store reserved-task table', () => {
  it('acks a reservation whose slot a later one took over, and refuses a receipt held for another task', async () => {
    const store = new MemoryStore();
    const at = Date.UTC(2030, 0, 1);
    // More reservations than the table's 4,096 slots are held at once: the first ones'
    // slots are taken over by later ones, and their acks must find them another way.
    const ids = Array.from({ length: 5_000 }, (_, i) => `t${i}`);
    await store.tasks.schedule(
      ids.map((id) => task(id, { runAt: at })),
      at,
    );
    const claimed = await store.tasks.reserve(ids, at);
    assert.equal(claimed.length, ids.length);
    // A receipt is only good for its own task, even when the slot it names holds another.
    assert.equal((await store.tasks.ack('t1', claimed[4_097]!.receipt!, at + 1)).status, 'stale');
    const outcomes = await store.tasks.ackMany(
      claimed.map((c) => ({ id: c.id, receipt: c.receipt! })),
      at + 1,
    );
    assert.deepEqual(new Set(outcomes.map((o) => o.status)), new Set(['acked']));
    assert.equal((await store.tasks.stats()).byState.completed, ids.length);
    assert.equal((await store.tasks.ack('t0', claimed[0]!.receipt!, at + 2)).status, 'already_acked', 'the same ack again, whose slot moved on');
    assert.equal((await store.tasks.ack('t0', claimed[4_096]!.receipt!, at + 2)).status, 'stale', 'the receipt of the task in its slot is not its own');
  });

  it('frees the slot when a reservation fails or expires, so a retry is acked through its new one', async () => {
    const store = new MemoryStore();
    const at = Date.UTC(2030, 0, 1);
    await store.tasks.schedule([task('r', { runAt: at })], at);
    const [first] = await store.tasks.reserve(['r'], at);
    assert.equal((await store.tasks.nack({ id: 'r', receipt: first!.receipt!, now: at + 1, delayMs: 5, random: 0 })).status, 'retrying');
    const [second] = await store.tasks.reserve(['r'], at + 10);
    assert.notEqual(second!.receipt, first!.receipt);
    assert.equal((await store.tasks.ack('r', first!.receipt!, at + 11)).status, 'stale');
    assert.equal((await store.tasks.ack('r', second!.receipt!, at + 11)).status, 'acked');
  });
});
