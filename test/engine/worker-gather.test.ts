/**
 * The Worker's `gather` option (the Pusher's workers): handlers that end in separate I/O
 * callbacks of one turn of the event loop are acked in one call, and the slots they freed
 * are refilled by one reserve, at the end of that turn. Without it, each costs its own.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Delivery } from '../../src/core/task/model.js';
import { systemClock } from '../../src/engine/timers/wall-clock.js';
import type { Job } from '../../src/engine/workers/job.js';
import type { Outcome } from '../../src/engine/workers/outcomes.js';
import { Worker, type WorkSource } from '../../src/engine/workers/worker.js';

const delivery = (n: number): Delivery => ({ id: `t${n}`, topic: 'x', payload: null, runAt: 0, attempt: 1, maxAttempts: 5, receipt: `r${n}`, reservedUntil: 1e15 });

/** A WorkSource that hands out `total` deliveries and records each reserve's max and each ack call's size. */
function source(total: number): WorkSource & { reserves: number[]; ackCalls: number[]; nacks: number; abort: () => void } {
  let next = 0;
  let release: (() => void) | null = null;
  const s = {
    reserves: [] as number[],
    ackCalls: [] as number[],
    nacks: 0,
    abort: () => release?.(),
    reserveFor(_topic: string, max: number, signal: AbortSignal): Promise<Delivery[]> {
      s.reserves.push(max);
      if (next >= total) {
        // Nothing more: wait until the worker closes, as the dispatcher does.
        return new Promise<Delivery[]>((resolve) => {
          release = () => resolve([]);
          signal.addEventListener('abort', () => resolve([]), { once: true });
        });
      }
      const n = Math.min(max, total - next);
      const out = Array.from({ length: n }, (_, i) => delivery(next + i));
      next += n;
      return Promise.resolve(out);
    },
    settle(_job: Job, outcome: Outcome): Promise<unknown> {
      if (!outcome.ok) s.nacks++;
      return Promise.resolve();
    },
    ackAll(jobs: readonly Job[]): Promise<unknown> {
      s.ackCalls.push(jobs.length);
      return Promise.resolve();
    },
    reportError: () => undefined,
    watch: () => undefined,
    defer: (callback: () => void) => void setImmediate(callback),
    pauseAfterFailure: () => Promise.resolve(),
    clock: systemClock,
    hold: () => undefined,
    drop: () => undefined,
    handlerAck: () => Promise.resolve(),
    handlerNack: () => Promise.resolve({ state: 'dead' as const }),
    confirm: () => Promise.resolve(),
  };
  return s;
}

/** A handler whose task ends in a timer callback of its own (as a response ends in a socket's callback). */
const endsInOwnCallback = (): Promise<void> => new Promise<void>((resolve) => setTimeout(resolve, 5));

/**
 * Handlers that all end in one callback: every handler started before the shared timer
 * fires is resolved by it, so they end in one turn however busy the host is (separate
 * timers of the same delay may fire in separate turns on a loaded machine).
 */
function endInOneCallback(): () => Promise<void> {
  let waiting: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  return () =>
    new Promise<void>((resolve) => {
      waiting.push(resolve);
      timer ??= setTimeout(() => {
        const due = waiting;
        waiting = [];
        timer = null;
        for (const end of due) end();
      }, 5);
    });
}

async function runWorker(gather: boolean): Promise<ReturnType<typeof source>> {
  const s = source(8);
  const worker = new Worker(s, { topic: 'x', handler: gather ? endInOneCallback() : endsInOwnCallback, concurrency: 4, ttrMs: undefined, gather });
  while (s.ackCalls.reduce((a, b) => a + b, 0) < 8) await new Promise((resolve) => setTimeout(resolve, 5));
  await worker.close();
  return s;
}

describe('Worker gather', () => {
  it('with gather: handlers ending in one turn share one ack call, and their slots one reserve', async () => {
    const s = await runWorker(true);
    // 4 reserved, the 4 end in one timers phase: acked together, refilled by one reserve of 4.
    assert.deepEqual(s.ackCalls, [4, 4]);
    assert.deepEqual(s.reserves.slice(0, 2), [4, 4]);
  });

  it('without gather: each handler ending in its own callback acks alone and is refilled alone', async () => {
    const s = await runWorker(false);
    assert.deepEqual(s.ackCalls, [1, 1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(s.reserves.slice(0, 5), [4, 1, 1, 1, 1]);
  });

  it('with gather: a failed handler is settled on its own, and close() waits for every settlement', async () => {
    const s = source(3);
    let n = 0;
    const oneCallback = endInOneCallback();
    const worker = new Worker(s, { topic: 'x', handler: () => (n++ === 1 ? Promise.reject(new Error('boom')) : oneCallback()), concurrency: 4, ttrMs: undefined, gather: true });
    while (s.ackCalls.reduce((a, b) => a + b, 0) + s.nacks < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await worker.close();
    assert.equal(s.nacks, 1);
    assert.deepEqual(s.ackCalls, [2]);
  });
});
