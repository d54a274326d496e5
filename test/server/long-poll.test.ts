/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
// A reserve long-poll answers as soon as a task falls due. Time is a ManualClock, so "due"
// happens exactly when the test advances it; the answer must then arrive within 5 ms of
// real time, with no further advance.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { openTestApp, send, type TestApp } from '../helpers/service.js';

const settleRequests = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 30));

describe('reserve long-poll', () => {
  let t: TestApp;
  let clock: ManualClock;
  before(async () => {
    clock = new ManualClock();
    t = await openTestApp({ clock });
  });
  after(() => t.close());

  async function dueAnswerMs(topic: string): Promise<{ elapsed: number; ids: string[] }> {
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: `${topic}-1`, topic, delayMs: 1_000 } });
    let answered = false;
    const poll = send(t.app, { method: 'POST', url: `/v1/topics/${topic}/reserve`, body: { waitMs: 30_000, max: 10 } }).then((r) => {
      answered = true;
      return r;
    });
    await settleRequests();
    clock.advance(999);
    await settleRequests();
    assert.equal(answered, false, 'answered before the task was due');
    const started = performance.now();
    clock.advance(1);
    const res = await poll;
    const elapsed = performance.now() - started;
    assert.equal(res.status, 200);
    return { elapsed, ids: res.body.tasks.map((x: { id: string }) => x.id) };
  }

  it('answers within 5 ms of the task becoming due', async () => {
    await dueAnswerMs('warmup');
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const { elapsed, ids } = await dueAnswerMs(`lp${i}`);
      assert.deepEqual(ids, [`lp${i}-1`]);
      times.push(elapsed);
    }
    times.sort((a, b) => a - b);
    // The median of five, so one GC pause on a shared machine does not fail the test.
    assert.ok(times[2]! < 5, `answered ${times.map((x) => x.toFixed(2)).join(', ')} ms after due`);
  });

  it('answers [] when waitMs passes with nothing due', async () => {
    let answered = false;
    const poll = send(t.app, { method: 'POST', url: '/v1/topics/empty/reserve', body: { waitMs: 5_000 } }).then((r) => {
      answered = true;
      return r;
    });
    await settleRequests();
    clock.advance(4_999);
    await settleRequests();
    assert.equal(answered, false);
    clock.advance(1);
    assert.deepEqual((await poll).body, { tasks: [] });
  });

  it('a task scheduled while a poll waits is handed to it once due', async () => {
    const poll = send(t.app, { method: 'POST', url: '/v1/topics/late/reserve', body: { waitMs: 10_000 } });
    await settleRequests();
    await send(t.app, { method: 'POST', url: '/v1/tasks', body: { id: 'late-1', topic: 'late', delayMs: 2_000 } });
    clock.advance(2_000);
    assert.deepEqual((await poll).body.tasks.map((x: { id: string }) => x.id), ['late-1']);
  });
});
