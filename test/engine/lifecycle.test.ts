import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { ackEachOneByOne } from '../../src/core/batch-fallbacks.js';
import type { AckRequest, StoreAckOutcome } from '../../src/core/ports/index.js';
import type { ReservedTask, TimerRef } from '../../src/core/task/model.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../src/stores/memory/memory-tasks.js';
import type { EngineQueue } from '../../src/engine/engine-queue.js';
import { T0, deferred, flush, openManual } from '../helpers/engine.js';

describe('task lifecycle', () => {
  let q: EngineQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('redelivers a reservation that is not acked within its TTR, and fences the old receipt', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', delayMs: 0, ttrMs: 1_000 });
    const [first] = await q.reserve('t');
    assert.equal(first?.attempt, 1);
    assert.equal(first?.reservedUntil, T0 + 1_000);
    assert.deepEqual(await q.reserve('t'), []);
    opened.clock.advance(999);
    await flush();
    assert.deepEqual(await q.reserve('t'), []);
    opened.clock.advance(1);
    await flush();
    const [second] = await q.reserve('t');
    assert.equal(second?.id, 'x');
    assert.equal(second?.attempt, 2);
    // The slow first attempt finishes late: it can neither complete nor fail the second.
    await assert.rejects(q.ack('x', first.receipt), (e) => isDelayQError(e, 'STALE_RECEIPT'));
    await assert.rejects(q.nack('x', first.receipt), (e) => isDelayQError(e, 'STALE_RECEIPT'));
    await q.ack('x', second.receipt);
    assert.equal((await q.get('x'))?.state, 'completed');
    // The same ack again (a reply lost, a retry): it completed the task, so it succeeds.
    await q.ack('x', second.receipt);
    await assert.rejects(q.ack('x', first.receipt), (e) => isDelayQError(e, 'STALE_RECEIPT'));
    await assert.rejects(q.ack('nope', second.receipt), (e) => isDelayQError(e, 'TASK_NOT_FOUND'));
  });

  it('a worker handler that outlives its TTR keeps its reservation (renewed): it is not delivered again, and its ack completes the task', async () => {
    const opened = await openManual();
    q = opened.q;
    const first = deferred();
    const seen: { attempt: number; at: number }[] = [];
    q.work(
      't',
      async (d) => {
        seen.push({ attempt: d.attempt, at: opened.clock.now() });
        if (d.attempt === 1) await first.promise;
      },
      { concurrency: 2 },
    );
    await q.schedule({ topic: 't', id: 'slow', ttrMs: 1_000 });
    await flush();
    for (let t = 0; t < 5_000; t += 50) {
      opened.clock.advance(50);
      await flush();
    }
    assert.deepEqual(seen, [{ attempt: 1, at: T0 }], 'five times its ttr later, still the first delivery only');
    first.resolve();
    await flush();
    const task = await q.get('slow');
    assert.deepEqual([task?.state, task?.attempts], ['completed', 1]);
  });

  it('cancelMany cancels what is pending, answers per id, and none of them fires', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.scheduleMany([
      { topic: 't', id: 'a', delayMs: 100 },
      { topic: 't', id: 'b', delayMs: 100 },
      { topic: 't', id: 'due', delayMs: 0 },
      { topic: 't', id: 'keep', delayMs: 100 },
    ]);
    const [due] = await q.reserve('t');
    assert.equal(due?.id, 'due');
    assert.deepEqual(await q.cancelMany(['a', 'due', 'missing', 'b', 'a']), [true, false, false, true, false]);
    assert.deepEqual(await q.cancelMany([]), []);
    assert.equal((await q.get('a'))?.state, 'cancelled');
    assert.equal((await q.get('due'))?.state, 'reserved');
    opened.clock.advance(100);
    await flush();
    const fired = await q.reserve('t', { max: 10 });
    assert.deepEqual(
      fired.map((d) => d.id),
      ['keep'],
    );
  });

  it('ackMany acks current receipts, answers stale and not_found, and the acked never come back', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.scheduleMany([
      { topic: 't', id: 'a', ttrMs: 1_000 },
      { topic: 't', id: 'b', ttrMs: 1_000 },
    ]);
    const [a, b] = await q.reserve('t', { max: 2 });
    assert.deepEqual(await q.ackMany([a!, { id: 'b', receipt: `${b!.receipt}x` }, { id: 'zz', receipt: 'r' }]), ['acked', 'stale', 'not_found']);
    opened.clock.advance(1_000);
    await flush();
    const again = await q.reserve('t', { max: 2 });
    assert.deepEqual(
      again.map((d) => d.id),
      ['b'],
    );
    assert.equal((await q.get('a'))?.state, 'completed');
  });

  it('an acked task is not redelivered when its old TTR passes', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', ttrMs: 100 });
    const [d] = await q.reserve('t');
    await q.ack('x', d!.receipt);
    opened.clock.advance(10_000);
    await flush();
    assert.deepEqual(await q.reserve('t'), []);
    assert.equal((await q.get('x'))?.attempts, 1);
  });

  it('retries a throwing handler with exponential backoff, then buries it, and retryDead brings it back', async () => {
    const opened = await openManual();
    q = opened.q;
    const attempts: { attempt: number; at: number }[] = [];
    let fail = true;
    q.work('t', (d) => {
      attempts.push({ attempt: d.attempt, at: opened.clock.now() });
      if (fail) throw new Error(`boom ${d.attempt}`);
    });
    await q.schedule({ topic: 't', id: 'x', maxAttempts: 3, backoff: { baseMs: 100, factor: 3, maxMs: 10_000, jitter: 0 } });
    await flush();
    opened.clock.advance(99);
    await flush();
    opened.clock.advance(1);
    await flush();
    opened.clock.advance(300);
    await flush();
    assert.deepEqual(attempts, [
      { attempt: 1, at: T0 },
      { attempt: 2, at: T0 + 100 },
      { attempt: 3, at: T0 + 400 },
    ]);
    const dead = await q.get('x');
    assert.equal(dead?.state, 'dead');
    assert.equal(dead?.lastError, 'boom 3');
    opened.clock.advance(1_000_000);
    await flush();
    assert.equal(attempts.length, 3, 'dead stays dead');
    fail = false;
    assert.equal(await q.retryDead('x'), true);
    assert.equal(await q.retryDead('x'), false);
    await flush();
    assert.equal(attempts.length, 4);
    assert.equal(attempts[3]?.attempt, 1);
    assert.equal((await q.get('x'))?.state, 'completed');
  });

  it('spreads retries with jitter drawn from the injected random source', async () => {
    const opened = await openManual({ random: () => 0 });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', backoff: { baseMs: 1_000, factor: 2, maxMs: 60_000, jitter: 0.5 } });
    const [d] = await q.reserve('t');
    const result = await q.nack('x', d!.receipt, { error: 'later' });
    assert.deepEqual(result, { state: 'pending', runAt: T0 + 500 });
  });

  it('nack with an explicit delay retries after exactly that delay', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x' });
    const [d] = await q.reserve('t');
    assert.deepEqual(await q.nack('x', d!.receipt, { delayMs: 250 }), { state: 'pending', runAt: T0 + 250 });
    opened.clock.advance(249);
    await flush();
    assert.deepEqual(await q.reserve('t'), []);
    opened.clock.advance(1);
    await flush();
    const [again] = await q.reserve('t');
    assert.equal(again?.attempt, 2);
  });

  it('a reservation that expires on the last attempt makes the task dead', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', maxAttempts: 1, ttrMs: 50 });
    await q.reserve('t');
    opened.clock.advance(50);
    await flush();
    assert.equal((await q.get('x'))?.state, 'dead');
  });

  it('reserve long-polls: it answers as soon as a task falls due, or with [] after waitMs', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x', delayMs: 300 });
    let answered: { id: string }[] | null = null;
    const poll = q.reserve('t', { waitMs: 1_000, max: 10 }).then((r) => (answered = r));
    opened.clock.advance(299);
    await flush();
    assert.equal(answered, null);
    opened.clock.advance(1);
    await flush();
    await poll;
    assert.deepEqual(
      (answered as { id: string }[] | null)?.map((d) => d.id),
      ['x'],
    );
    const empty = q.reserve('t', { waitMs: 1_000 });
    opened.clock.advance(1_000);
    assert.deepEqual(await empty, []);
  });

  it('reserve takes at most `max` due tasks in due order', async () => {
    const opened = await openManual();
    q = opened.q;
    await q.scheduleMany(Array.from({ length: 5 }, (_, i) => ({ topic: 't', id: `k${i}`, runAt: T0 - 10 + i })));
    const batch = await q.reserve('t', { max: 3 });
    assert.deepEqual(
      batch.map((d) => d.id),
      ['k0', 'k1', 'k2'],
    );
    assert.equal((await q.reserve('t', { max: 3 })).length, 2);
  });

  it('a worker never runs more handlers at once than its concurrency', async () => {
    const opened = await openManual();
    q = opened.q;
    const gate = deferred();
    let running = 0;
    let peak = 0;
    const worker = q.work(
      't',
      async () => {
        running++;
        peak = Math.max(peak, running);
        await gate.promise;
        running--;
      },
      { concurrency: 3 },
    );
    await q.scheduleMany(Array.from({ length: 10 }, () => ({ topic: 't' })));
    await flush();
    assert.equal(worker.running, 3);
    gate.resolve();
    await flush(30);
    assert.equal(peak, 3);
    assert.equal((await q.stats()).counts.completed, 10);
  });

  it('close() lets running handlers finish and ack, ends long-polls, then refuses calls', async () => {
    const opened = await openManual();
    q = opened.q;
    const gate = deferred();
    const started: string[] = [];
    q.work('t', async (d) => {
      started.push(d.id);
      await gate.promise;
    });
    await q.schedule({ topic: 't', id: 'busy' });
    await q.schedule({ topic: 'later', id: 'waiting', delayMs: 60_000 });
    await flush();
    assert.deepEqual(started, ['busy']);
    const poll = q.reserve('other', { waitMs: 60_000 });
    let closed = false;
    const closing = q.close().then(() => (closed = true));
    assert.deepEqual(await poll, []);
    await flush();
    assert.equal(closed, false, 'close waits for the running handler');
    await assert.rejects(q.schedule({ topic: 't' }), (e) => isDelayQError(e, 'QUEUE_CLOSED'));
    gate.resolve();
    await closing;
    assert.equal(closed, true);
    await assert.rejects(q.get('busy'), (e) => isDelayQError(e, 'QUEUE_CLOSED'));
    q = undefined;
  });

  for (const batched of [true, false]) {
    it(`an ack the store fails to take leaves the task to its TTR, and it is delivered again (${batched ? 'ackMany' : 'one ack a delivery'})`, async () => {
      let failNextAck = true;
      class FlakyTasks extends MemoryTasks {
        override async ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
          if (failNextAck) {
            failNextAck = false;
            throw new Error('connection reset');
          }
          return super.ack(id, receipt, now);
        }
        override async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
          if (failNextAck) {
            failNextAck = false;
            throw new Error('connection reset');
          }
          return super.ackMany(acks, now);
        }
      }
      const store = new MemoryStore((assertOpen) => new FlakyTasks(assertOpen));
      // A store with no batch path of its own: its ackMany acks one delivery at a time.
      if (!batched) Object.defineProperty(store.tasks, 'ackMany', { value: (acks: readonly AckRequest[], now: number) => ackEachOneByOne(store.tasks, acks, now) });
      const opened = await openManual({ store });
      q = opened.q;
      const attempts: number[] = [];
      q.work('t', (d) => void attempts.push(d.attempt));
      await q.schedule({ topic: 't', id: 'x', ttrMs: 1_000 });
      await flush();
      assert.deepEqual(attempts, [1]);
      assert.equal((await q.get('x'))?.state, 'reserved');
      opened.clock.advance(1_000);
      await flush();
      assert.deepEqual(attempts, [1, 2]);
      assert.equal((await q.get('x'))?.state, 'completed');
    });
  }

  it('a reservation the store fails to make puts the tasks back, and they are delivered once it recovers', async () => {
    let failNextReserve = true;
    class FlakyReserves extends MemoryTasks {
      override async reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
        if (failNextReserve) {
          failNextReserve = false;
          throw new Error('database is locked');
        }
        return super.reserve(ids, now, ttrMs);
      }
      // The engine reserves through refs: route them to the flaky reserve above.
      override reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
        return this.reserve(
          refs.map((r) => r.id),
          now,
          ttrMs,
        );
      }
    }
    const opened = await openManual({ store: new MemoryStore((assertOpen) => new FlakyReserves(assertOpen)) });
    q = opened.q;
    await q.schedule({ topic: 't', id: 'x' });
    await assert.rejects(q.reserve('t'), /database is locked/);
    const [delivery] = await q.reserve('t');
    assert.equal(delivery?.id, 'x');
    assert.equal(delivery?.attempt, 1);
  });

  it('close() settles the in-flight task before it closes the store', async () => {
    const calls: string[] = [];
    class RecordingTasks extends MemoryTasks {
      override async ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
        calls.push(`ack ${id}`);
        return super.ack(id, receipt, now);
      }
      override async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
        for (const a of acks) calls.push(`ack ${a.id}`);
        return super.ackMany(acks, now);
      }
    }
    class RecordingStore extends MemoryStore<RecordingTasks> {
      constructor() {
        super((assertOpen) => new RecordingTasks(assertOpen));
      }
      override async close(): Promise<void> {
        calls.push('close');
        return super.close();
      }
    }
    const opened = await openManual({ store: new RecordingStore() });
    const gate = deferred();
    opened.q.work('t', () => gate.promise);
    await opened.q.schedule({ topic: 't', id: 'busy' });
    await flush();
    const closing = opened.q.close();
    await flush();
    assert.deepEqual(calls, []);
    gate.resolve();
    await closing;
    assert.deepEqual(calls, ['ack busy', 'close']);
  });
});
