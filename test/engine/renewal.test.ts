/**
 * `work` handlers longer than their ttr (issue 46), on an injected clock: the reservation is
 * renewed while the handler runs, in one store call for many; the handler's signal aborts
 * when the reservation is lost (renewal refused, or not renewed in time: the store out of
 * reach, the process frozen), when timeoutMs passes (the attempt fails as `timeout`), and
 * when worker.close({ timeoutMs }) stops waiting (the reservation is given back).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import type { ManualClock } from '../../src/core/manual-clock.js';
import type { AckRequest, ExtendOutcome, ExtendRequest, StoreAckOutcome } from '../../src/core/ports/index.js';
import type { Delivery } from '../../src/core/task/model.js';
import type { HandlerContext } from '../../src/engine/workers/job.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../src/stores/memory/memory-tasks.js';
import { T0, flush, openManual } from '../helpers/engine.js';

/** A memory tasks role that counts its extend calls, and refuses them (the store out of reach) while `down`. */
class CountingTasks extends MemoryTasks {
  extendCalls: ExtendRequest[][] = [];
  down = false;
  acked: string[] = [];

  override async ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    const outcomes = await super.ackMany(acks, now);
    outcomes.forEach((o, i) => o.status === 'acked' && this.acked.push(acks[i]!.id));
    return outcomes;
  }

  override async extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    this.extendCalls.push([...requests]);
    if (this.down) throw new Error('store out of reach');
    return super.extend(requests, now);
  }
}

/** Resolves after `ms` of the queue's clock. */
function sleep(clock: ManualClock, ms: number): Promise<void> {
  return new Promise((resolve) => clock.setTimer(resolve, ms));
}

/** Resolves after `ms` of the clock, or at once when `signal` aborts (a handler that stops when told). */
function sleepOrAbort(clock: ManualClock, ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = clock.setTimer(resolve, ms);
    signal.addEventListener('abort', () => (clock.clearTimer(timer), resolve()), { once: true });
  });
}

/** Closes the queue, moving its clock meanwhile: handlers still sleeping on it end (or are told to after a minute), and their settlements go. */
async function close(q: { close(options: { timeoutMs: number }): Promise<void> }, clock: ManualClock): Promise<void> {
  let closed = false;
  const closing = q.close({ timeoutMs: 60_000 }).then(() => (closed = true));
  for (let i = 0; i < 10_000 && !closed; i++) {
    clock.advance(100);
    await flush(2);
  }
  await closing;
}

/** Moves the clock `total` ms in steps of `step`, letting the engine's promise chains run between steps. */
async function run(clock: ManualClock, total: number, step = 20): Promise<void> {
  for (let t = 0; t < total; t += step) {
    clock.advance(step);
    await flush(4);
  }
}

describe('work: renewal while the handler runs', () => {
  it('runs a 1.5 s handler of a task with ttrMs 500 once, renewed, and acks it (it ran 5 times, 3 at once, and died)', async () => {
    const store = new MemoryStore((assertOpen) => new CountingTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    try {
      const starts: number[] = [];
      let running = 0;
      let most = 0;
      q.work('long', async () => {
        starts.push(clock.now());
        most = Math.max(most, ++running);
        await sleep(clock, 1_500);
        running--;
      });
      await q.schedule({ id: 'export', topic: 'long', ttrMs: 500 });
      await flush();
      await run(clock, 6_000);
      const task = await q.get('export');
      assert.deepEqual([starts.length, most], [1, 1], 'one run, never two at once');
      assert.deepEqual([task?.state, task?.attempts, task?.history.map((e) => e.outcome)], ['completed', 1, ['acked']]);
      assert.equal(task?.history[0]?.durationMs, 1_500, 'one attempt of 1.5 s');
      assert.ok(store.tasks.extendCalls.length >= 3 && store.tasks.extendCalls.length <= 6, `renewed about every 1/3 of its ttr: ${store.tasks.extendCalls.length} calls`);
    } finally {
      await close(q, clock);
    }
  });

  it('renews every running handler of the process in one store call per round, not one per task', async () => {
    const store = new MemoryStore((assertOpen) => new CountingTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    try {
      q.work('batch', () => sleep(clock, 2_000), { concurrency: 100 });
      // 60 tasks falling due at 60 different times over 300 ms: their reservations end at 60 different times.
      await q.scheduleMany(Array.from({ length: 60 }, (_, i) => ({ id: `b${i}`, topic: 'batch', ttrMs: 900, delayMs: i * 5 })));
      await flush();
      await run(clock, 4_000, 5);
      const done = await q.list({ topic: 'batch', state: 'completed', limit: 100 });
      assert.equal(done.length, 60, 'every one acked, none expired');
      const renewed = store.tasks.extendCalls.reduce((n, call) => n + call.length, 0);
      assert.ok(renewed >= 60 * 2, `each renewed at least twice over its 2 s: ${renewed}`);
      assert.ok(store.tasks.extendCalls.length <= 12, `${store.tasks.extendCalls.length} calls for ${renewed} renewals: rounds are shared`);
    } finally {
      await close(q, clock);
    }
  });
});

describe('work: the handler signal', () => {
  it('aborts when the store refuses the renewal (the reservation was settled elsewhere), before the reservation would run out', async () => {
    const { q, clock } = await openManual();
    try {
      let seen: { at: number; reason: unknown } | null = null;
      let delivery: Delivery | null = null;
      q.work('w', async (d, { signal }: HandlerContext) => {
        delivery = d;
        await sleepOrAbort(clock, 60_000, signal);
        seen = { at: clock.now(), reason: signal.reason };
      });
      await q.schedule({ id: 'a', topic: 'w', ttrMs: 3_000 });
      await flush();
      await run(clock, 100);
      // Another consumer of the receipt settles it (a pull consumer acking by hand, say).
      await q.nack('a', delivery!.receipt, { delayMs: 60_000 });
      await run(clock, 3_000);
      assert.ok(seen !== null, 'the handler was told');
      const { at, reason } = seen as { at: number; reason: unknown };
      assert.ok(at <= T0 + 2_100, `told at the first renewal (${at - T0} ms), before the 3 s reservation would end`);
      assert.ok(isDelayQError(reason, 'RESERVATION_LOST') && reason.details?.['why'] === 'refused', String(reason));
    } finally {
      await close(q, clock);
    }
  });

  it('aborts when the store is out of reach, before the reservation runs out, and the task goes elsewhere only after', async () => {
    const store = new MemoryStore((assertOpen) => new CountingTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    try {
      const events: [string, number, string][] = [];
      let first = true;
      q.work('w', async (d, { signal }) => {
        const who = first ? 'first' : 'second';
        first = false;
        events.push(['start', clock.now(), who]);
        await sleepOrAbort(clock, who === 'first' ? 60_000 : 10, signal);
        if (!signal.aborted) return;
        events.push(['abort', clock.now(), who]);
        // A handler slow to stop: its reservation runs out meanwhile, and its late ack is refused.
        await sleep(clock, 1_000);
      });
      await q.schedule({ id: 'a', topic: 'w', ttrMs: 3_000 });
      await flush();
      await run(clock, 100);
      store.tasks.down = true;
      await run(clock, 4_000);
      store.tasks.down = false;
      await run(clock, 1_000);
      const [start1, abort1, start2] = events;
      assert.deepEqual(events.map(([e, , who]) => `${e} ${who}`), ['start first', 'abort first', 'start second']);
      assert.ok(abort1![1] < T0 + 3_000, `aborted at ${abort1![1] - T0} ms, before the reservation's end (3 s)`);
      assert.ok(start2![1] >= T0 + 3_000 && start2![1] > abort1![1], 'redelivered only after its end');
      assert.ok(store.tasks.extendCalls.length >= 2, 'the failed renewal was asked again before the end');
      assert.equal(start1![1], T0);
      const task = await q.get('a');
      assert.deepEqual(task?.history.map((e) => e.outcome), ['expired', 'acked'], 'the first attempt expired; its late ack changed nothing');
    } finally {
      await close(q, clock);
    }
  });

  it('after a freeze past the reservation\'s end, signal.aborted is true at the handler\'s first look, and the late renewal is never sent as a success', async () => {
    const store = new MemoryStore((assertOpen) => new CountingTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    try {
      const looks: [number, boolean][] = [];
      q.work('w', async (_d, { signal }) => {
        for (;;) {
          looks.push([clock.now(), signal.aborted]);
          if (signal.aborted) return;
          await sleep(clock, 100);
        }
      });
      await q.schedule({ id: 'a', topic: 'w', ttrMs: 3_000 });
      await flush();
      await run(clock, 1_000, 50);
      const callsBefore = store.tasks.extendCalls.length;
      // The process stops for 5 s: no timer runs, the clock moves on.
      clock.jump(5_000);
      clock.advance(0);
      await flush();
      const afterFreeze = looks.filter(([at]) => at >= T0 + 6_000);
      assert.deepEqual(afterFreeze[0]?.[1], true, `the first look after the freeze sees the loss: ${JSON.stringify(afterFreeze)}`);
      assert.equal(store.tasks.extendCalls.length, callsBefore, 'no renewal asked for a reservation that ran out during the freeze');
    } finally {
      await close(q, clock);
    }
  });

  it('aborts at timeoutMs (renewed until then) and fails the attempt as timeout; a per-task timeout comes from the delivery', async () => {
    const { q, clock } = await openManual();
    try {
      const reasons: unknown[] = [];
      q.work(
        't',
        async (d, { signal }) => {
          await sleepOrAbort(clock, 60_000, signal);
          reasons.push([d.id, clock.now() - T0, signal.reason]);
        },
        { timeoutMs: (d) => (d.id === 'quick' ? 1_000 : 2_500) },
      );
      await q.scheduleMany([
        { id: 'quick', topic: 't', ttrMs: 400, maxAttempts: 3, backoff: { baseMs: 60_000 } },
        { id: 'slow', topic: 't', ttrMs: 400, maxAttempts: 3, backoff: { baseMs: 60_000 } },
      ]);
      await flush();
      await run(clock, 3_000);
      assert.deepEqual(
        reasons.map((r) => (r as [string, number, unknown]).slice(0, 2)),
        [
          ['quick', 1_000],
          ['slow', 2_500],
        ],
      );
      assert.ok(reasons.every((r) => isDelayQError((r as unknown[])[2], 'HANDLER_TIMEOUT')));
      const quick = await q.get('quick');
      assert.deepEqual([quick?.state, quick?.history.map((e) => [e.outcome, e.durationMs])], ['pending', [['timeout', 1_000]]], 'not expired at 400 ms: renewed until the timeout');
      assert.match(quick?.lastError ?? '', /timed out/);
    } finally {
      await close(q, clock);
    }
  });

  it('a timeoutMs function that answers nonsense fails the attempt before the handler runs; a bad timeoutMs is refused at work()', async () => {
    const { q, clock } = await openManual();
    try {
      assert.throws(() => q.work('t', () => undefined, { timeoutMs: 0 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
      assert.throws(() => q.work('t', () => undefined, { timeoutMs: 1.5 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
      let ran = 0;
      q.work('t', () => void ran++, { timeoutMs: () => -1 });
      await q.schedule({ id: 'x', topic: 't', maxAttempts: 1 });
      await flush();
      await run(clock, 100);
      const x = await q.get('x');
      assert.equal(ran, 0);
      assert.deepEqual([x?.state, x?.lastError?.includes('timeoutMs')], ['dead', true]);
    } finally {
      await close(q, clock);
    }
  });

  it('worker.close({ timeoutMs }) stops waiting: the signal aborts and the reservation is given back uncounted, to another worker at once', async () => {
    const { q, clock } = await openManual();
    try {
      let told: unknown = null;
      const first = q.work('c', async (_d, { signal }) => {
        await sleepOrAbort(clock, 600_000, signal);
        told = signal.reason;
      });
      await q.schedule({ id: 'a', topic: 'c', ttrMs: 1_000 });
      await flush();
      await run(clock, 100);
      let closed = false;
      void first.close({ timeoutMs: 2_000 }).then(() => (closed = true));
      await run(clock, 1_500);
      assert.equal(closed, false, 'still waiting, the reservation renewed meanwhile');
      assert.equal((await q.get('a'))?.state, 'reserved');
      await run(clock, 600);
      assert.equal(closed, true);
      assert.ok(isDelayQError(told, 'WORKER_CLOSED'), String(told));
      const given = await q.get('a');
      assert.deepEqual([given?.state, given?.attempts, given?.history], ['pending', 0, []], 'given back: the attempt not counted');
      const second: string[] = [];
      q.work('c', (d) => void second.push(d.id));
      await run(clock, 100);
      assert.deepEqual(second, ['a']);
      await assert.rejects(first.close({ timeoutMs: -1 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    } finally {
      await close(q, clock);
    }
  });

  it('a graceful close waits for a handler longer than its ttr, renewing it, and acks it', async () => {
    const store = new MemoryStore((assertOpen) => new CountingTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    q.work('g', () => sleep(clock, 3_000));
    await q.schedule({ id: 'a', topic: 'g', ttrMs: 500 });
    await flush();
    await run(clock, 100);
    let closed = false;
    const closing = q.close().then(() => (closed = true));
    await run(clock, 2_000);
    const during = await store.tasks.get('a');
    assert.deepEqual([closed, during?.state, during?.attempts], [false, 'reserved', 1], 'renewed while the queue closes');
    await run(clock, 1_000);
    await closing;
    assert.equal(closed, true);
    assert.deepEqual(store.tasks.acked, ['a']);
  });
});

describe('work: renewal on a slow store', () => {
  /** A memory tasks role whose extend answers `latencyMs` of the clock late, and which counts how far before its end each reservation was renewed. */
  class SlowTasks extends CountingTasks {
    latencyMs = 0;
    leads: number[] = [];
    clock: ManualClock | null = null;

    override async extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
      for (const r of requests) {
        const task = await super.get(r.id);
        if (task?.reservedUntil != null) this.leads.push(task.reservedUntil - now);
      }
      await new Promise<void>((resolve) => this.clock!.setTimer(resolve, this.latencyMs));
      return super.extend(requests, now);
    }
  }

  it('renews earlier once the store answered slowly, so a slow answer still comes before the reservation counts as lost', async () => {
    const store = new MemoryStore((assertOpen) => new SlowTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    store.tasks.clock = clock;
    store.tasks.latencyMs = 200;
    try {
      let told: unknown = null;
      q.work('slow', async (_d, { signal }) => {
        await sleepOrAbort(clock, 4_000, signal);
        if (signal.aborted) told = signal.reason;
      });
      await q.schedule({ id: 'a', topic: 'slow', ttrMs: 1_000 });
      await flush();
      await run(clock, 5_000);
      assert.equal(told, null, 'never lost');
      assert.deepEqual((await q.get('a'))?.history.map((e) => e.outcome), ['acked']);
      const [first, ...later] = store.tasks.leads;
      assert.ok(first! <= 340, `the first renewal at a third of the ttr left: ${first} ms`);
      assert.ok(later.length > 0 && later.every((lead) => lead >= 450), `then ahead by two round trips and the margin (>= 500 ms): ${later.join(', ')}`);
    } finally {
      await close(q, clock);
    }
  });
  it('never renews a reservation with more than half of it left, however slow the store: a slow store gets no more renewals to make', async () => {
    const store = new MemoryStore((assertOpen) => new SlowTasks(assertOpen));
    const { q, clock } = await openManual({ store });
    store.tasks.clock = clock;
    // Two round trips and the margin (200 + 2 x 430 ms) would be 1,060 ms of a 2,000 ms ttr.
    store.tasks.latencyMs = 430;
    try {
      let told: unknown = null;
      q.work('slow', async (_d, { signal }) => {
        await sleepOrAbort(clock, 10_000, signal);
        if (signal.aborted) told = signal.reason;
      });
      await q.schedule({ id: 'a', topic: 'slow', ttrMs: 2_000 });
      await flush();
      await run(clock, 11_000);
      assert.equal(told, null, `never lost (renewed with ${store.tasks.leads.join(', ')} ms left)`);
      const [, ...later] = store.tasks.leads;
      assert.ok(later.length > 0, 'renewed');
      assert.ok(later.every((lead) => lead <= 1_000), `each renewal with at most half of the ttr left: ${later.join(', ')}`);
      assert.ok(store.tasks.leads.length <= 10, `at most two renewals per ttr over 10 s: ${store.tasks.leads.length}`);
    } finally {
      await close(q, clock);
    }
  });
});

describe('work: an ack in flight', () => {
  it('keeps the reservation renewed until the store answered the ack, however slow it is', async () => {
    const store = new MemoryStore((assertOpen) => new (class extends CountingTasks {
      clock: ManualClock | null = null;
      override async ackMany(acks: readonly AckRequest[], _now: number): Promise<StoreAckOutcome[]> {
        // The store takes 2 s (four ttrs) to take the ack: it is applied as it arrives.
        await new Promise<void>((resolve) => this.clock!.setTimer(resolve, 2_000));
        return super.ackMany(acks, this.clock!.now());
      }
    })(assertOpen));
    const { q, clock } = await openManual({ store });
    store.tasks.clock = clock;
    try {
      q.work('w', () => sleep(clock, 1_000));
      await q.schedule({ id: 'a', topic: 'w', ttrMs: 500 });
      await flush();
      await run(clock, 5_000);
      assert.deepEqual(store.tasks.acked, ['a'], 'acked, not run out while the ack was on its way');
      assert.deepEqual((await q.get('a'))?.history.map((e) => [e.outcome, e.durationMs]), [['acked', 3_000]]);
    } finally {
      await close(q, clock);
    }
  });
});
