/**
 * Property test of the whole engine (wheel, driver, ready queue, worker, memory store)
 * against a naive model, on random schedule / cancel / reschedule / advance / stall
 * sequences driven by a manual clock: no task is delivered before its runAt, every task
 * that was not cancelled is delivered exactly once (the handler never fails), and the
 * tasks that fall due together are delivered in (runAt, insertion) order.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { flush, openManual } from '../helpers/engine.js';

type Op =
  | { kind: 'schedule'; delay: number }
  | { kind: 'cancel'; pick: number }
  | { kind: 'reschedule'; pick: number; delay: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'stall'; ms: number };

const delay = fc.oneof(fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 5_000 }), fc.integer({ min: 0, max: 3 * 24 * 3600 * 1000 }));
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 5, arbitrary: delay.map((d) => ({ kind: 'schedule' as const, delay: d })) },
  { weight: 1, arbitrary: fc.nat().map((pick) => ({ kind: 'cancel' as const, pick })) },
  { weight: 2, arbitrary: fc.tuple(fc.nat(), delay).map(([pick, d]) => ({ kind: 'reschedule' as const, pick, delay: d })) },
  { weight: 3, arbitrary: fc.integer({ min: 0, max: 100 }).map((ms) => ({ kind: 'advance' as const, ms })) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 4 * 24 * 3600 * 1000 }).map((ms) => ({ kind: 'stall' as const, ms })) },
);

interface ModelTask {
  runAt: number;
  seq: number;
}

describe('DelayQueue against a naive model', () => {
  it('never early, never lost, never twice, in (runAt, insertion) order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { maxLength: 60 }), async (ops) => {
        const { q, clock } = await openManual();
        const delivered: { id: string; runAt: number; at: number }[] = [];
        q.work('p', (d) => void delivered.push({ id: d.id, runAt: d.runAt, at: clock.now() }), { concurrency: 1 });
        const pending = new Map<string, ModelTask>();
        const done = new Set<string>();
        let seq = 0;
        let names = 0;
        // Deliveries are checked at each clock step, including those that happened between
        // steps (a task due at once is delivered while the next call is awaited).
        let checked = 0;
        try {
          for (const o of ops) {
            const ids = [...pending.keys()];
            if (o.kind === 'schedule') {
              const id = `t${names++}`;
              const { runAt } = await q.schedule({ topic: 'p', id, delayMs: o.delay });
              pending.set(id, { runAt, seq: seq++ });
            } else if (o.kind === 'cancel' && ids.length > 0) {
              const id = ids[o.pick % ids.length]!;
              const model = pending.get(id)!;
              const due = model.runAt <= clock.now();
              const cancelled = await q.cancel(id);
              // A due task may already be reserved; otherwise cancel must win.
              if (!due) assert.equal(cancelled, true, `cancel ${id} before its time`);
              if (cancelled) pending.delete(id);
            } else if (o.kind === 'reschedule' && ids.length > 0) {
              const id = ids[o.pick % ids.length]!;
              const model = pending.get(id)!;
              const due = model.runAt <= clock.now();
              const moved = await q.reschedule(id, { delayMs: o.delay });
              if (!due) assert.equal(moved, true);
              if (moved) pending.set(id, { runAt: clock.now() + o.delay, seq: seq++ });
            } else if (o.kind === 'advance' || o.kind === 'stall') {
              if (o.kind === 'advance') clock.advance(o.ms);
              else {
                clock.jump(o.ms);
                clock.advance(0);
              }
              await flush(4);
              const now = clock.now();
              const expected = [...pending].filter(([, t]) => t.runAt <= now).sort(([, a], [, b]) => a.runAt - b.runAt || a.seq - b.seq);
              const got = delivered.slice(checked);
              checked = delivered.length;
              assert.deepEqual(
                got.map((d) => d.id),
                expected.map(([id]) => id),
                'the due tasks, in (runAt, insertion) order',
              );
              for (const d of got) {
                assert.ok(d.at >= d.runAt, `${d.id} early`);
                assert.ok(!done.has(d.id), `${d.id} twice`);
                done.add(d.id);
                pending.delete(d.id);
              }
            }
          }
          // Everything left is delivered once its time comes.
          clock.advance(8 * 24 * 3600 * 1000);
          await flush(4);
          assert.equal(delivered.length, done.size + pending.size);
          for (const id of pending.keys()) assert.ok(delivered.some((d) => d.id === id), `${id} lost`);
        } finally {
          await q.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});
