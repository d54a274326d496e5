// The LoopRunner's lifecycle (built -> running -> stopping -> stopped -> sealed), table-driven
// like asynq's server state tests: each row starts from a phase, makes one call and says
// what it answers and where the LoopRunner ends up. Real parts on a ManualClock, no sleeps.
import { NO_EVENTS } from '../../src/engine/events/task-events.js';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { NO_OBSERVER } from '../../src/core/observer.js';
import { DEFAULT_ENGINE_TUNING } from '../../src/core/options.js';
import type { TimerRef } from '../../src/core/task/model.js';
import { DEFAULT_LIMITS } from '../../src/core/task/validate.js';
import { silentLogger } from '../../src/core/logger.js';
import { InFlight } from '../../src/engine/in-flight.js';
import type { LoopContext } from '../../src/engine/loop-context.js';
import { LoopRunner, type RunnerPhase } from '../../src/engine/loop-runner.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { T0, flush } from '../helpers/engine.js';
import { ScriptedTransport, testSigner } from '../helpers/push.js';

interface Built {
  readonly runner: LoopRunner;
  readonly clock: ManualClock;
  readonly store: MemoryStore;
  readonly transport: ScriptedTransport;
}

function build(): Built {
  const clock = new ManualClock(T0);
  const store = new MemoryStore();
  const context: LoopContext = { store, clock, logger: silentLogger, observer: NO_OBSERVER, tuning: DEFAULT_ENGINE_TUNING, inFlight: new InFlight(), events: NO_EVENTS };
  const transport = new ScriptedTransport(clock);
  const push = { ports: { transport, signer: testSigner }, defaultSecret: null };
  return { runner: new LoopRunner(context, { push, limits: DEFAULT_LIMITS, random: Math.random }), clock, store, transport };
}

/** Brings a fresh LoopRunner to `phase` by its own calls. */
async function reach(phase: RunnerPhase): Promise<Built> {
  const built = build();
  const { runner } = built;
  if (phase === 'built') return built;
  runner.start();
  if (phase === 'running') return built;
  const stopped = runner.stop();
  if (phase === 'stopping') return built;
  await stopped;
  if (phase === 'stopped') return built;
  runner.seal();
  return built;
}

type Call = 'start' | 'stop' | 'seal';
const CALLS: Readonly<Record<Call, (s: LoopRunner) => Promise<void>>> = {
  start: async (s) => s.start(),
  stop: (s) => s.stop(),
  seal: async (s) => s.seal(),
};

// from, call -> answer ('ok' or the error), then the phase once the call has settled.
const TABLE: readonly [RunnerPhase, Call, 'ok' | RegExp, RunnerPhase][] = [
  ['built', 'start', 'ok', 'running'],
  ['built', 'stop', 'ok', 'stopped'],
  ['built', 'seal', /^Error: LoopRunner\.seal: the loop runner is built/, 'built'],
  ['running', 'start', /^Error: LoopRunner\.start: the loop runner is running/, 'running'],
  ['running', 'stop', 'ok', 'stopped'],
  ['running', 'seal', /^Error: LoopRunner\.seal: the loop runner is running/, 'running'],
  ['stopping', 'start', /^Error: LoopRunner\.start: the loop runner is stopping/, 'stopping'],
  ['stopping', 'stop', 'ok', 'stopped'],
  ['stopping', 'seal', /^Error: LoopRunner\.seal: the loop runner is stopping/, 'stopping'],
  ['stopped', 'start', /^Error: LoopRunner\.start: the loop runner is stopped/, 'stopped'],
  ['stopped', 'stop', 'ok', 'stopped'],
  ['stopped', 'seal', 'ok', 'sealed'],
  ['sealed', 'start', /^Error: LoopRunner\.start: the loop runner is sealed/, 'sealed'],
  ['sealed', 'stop', 'ok', 'sealed'],
  ['sealed', 'seal', 'ok', 'sealed'],
];

describe('LoopRunner lifecycle', () => {
  for (const [from, call, answer, to] of TABLE) {
    it(`${from} + ${call}() -> ${answer === 'ok' ? 'ok' : 'throws'}, then ${to}`, async () => {
      const { runner, clock, store } = await reach(from);
      assert.equal(runner.phase, from);
      const result = CALLS[call](runner);
      if (answer === 'ok') await result;
      else await assert.rejects(result, (error: unknown) => answer.test(String(error)));
      assert.equal(runner.phase, to);
      // Whatever the path, once stopped no loop keeps a timer on the clock.
      await runner.stop();
      assert.equal(clock.pendingTimers, 0);
      await store.close();
    });
  }

  it('stop() called twice answers the same promise; the loops stop once', async () => {
    const { runner, transport, store } = await reach('running');
    const first = runner.stop();
    assert.equal(runner.phase, 'stopping');
    assert.equal(runner.stop(), first);
    await first;
    assert.equal(runner.phase, 'stopped');
    assert.equal(transport.closed, true);
    await store.close();
  });

  it('stop() before start() stops the loops that never ran, releasing what they hold (the push transport)', async () => {
    const { runner, transport, clock, store } = build();
    await runner.stop();
    assert.equal(runner.phase, 'stopped');
    assert.equal(transport.closed, true);
    assert.equal(clock.pendingTimers, 0);
    assert.throws(() => runner.start(), /the loop runner is stopped; it starts once, from built/);
    await store.close();
  });

  it('start() arms the loops on the clock; stop() disarms every one', async () => {
    const { runner, clock, store } = build();
    assert.equal(clock.pendingTimers, 0, 'built: nothing runs');
    runner.start();
    await flush();
    assert.ok(clock.pendingTimers > 0, 'running: the janitor, the pusher and the recurring loop wait on the clock');
    await runner.stop();
    assert.equal(clock.pendingTimers, 0);
    await store.close();
  });

  it('timers are placed while stopped (handlers still settle at close), never once sealed', async () => {
    const { runner, store } = await reach('stopped');
    const ref = (id: string): TimerRef => ({ id, topic: 't', kind: 'run', dueAt: T0 + 1_000, seq: 0, receipt: null });
    runner.timers.place(ref('a'), true);
    assert.equal(runner.stats().timers, 1);
    runner.seal();
    runner.timers.place(ref('b'), true);
    assert.equal(runner.stats().timers, 1);
    await store.close();
  });
});
