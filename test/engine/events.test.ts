import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import type { LoggedTaskEvent } from '../../src/core/events.js';
import type { DelayQueue } from '../../src/open-queue.js';
import { T0, flush, openManual } from '../helpers/engine.js';

/** Takes `n` events from an iterator, failing after `turns` event-loop turns without them. */
export async function take(it: AsyncIterator<LoggedTaskEvent>, n: number): Promise<LoggedTaskEvent[]> {
  const out: LoggedTaskEvent[] = [];
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([it.next(), new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), 5_000)))]);
    clearTimeout(timer);
    if (next === 'timeout') throw new Error(`only ${out.length} of ${n} events: ${JSON.stringify(out)}`);
    if (next.done === true) break;
    out.push(next.value);
  }
  return out;
}

describe('lifecycle events (memory store)', () => {
  let q: DelayQueue | undefined;
  afterEach(async () => {
    await q?.close();
    q = undefined;
  });

  it('tells every transition with id, topic, attempt and time, in order', async () => {
    const opened = await openManual({ events: true });
    q = opened.q;
    const events = q.events();
    await q.schedule({ topic: 't', id: 'a', delayMs: 0, maxAttempts: 2 });
    await q.schedule({ topic: 't', id: 'b', delayMs: 5_000 });
    await q.reschedule('b', { delayMs: 6_000 });
    await q.cancel('b');
    const [first] = await q.reserve('t');
    await q.nack('a', first!.receipt, { error: 'boom', delayMs: 1_000 });
    opened.clock.advance(1_000);
    await flush();
    const [second] = await q.reserve('t');
    await q.nack('a', second!.receipt, { error: 'again' });
    await q.retryDead('a');
    const [third] = await q.reserve('t');
    await q.ack('a', third!.receipt);
    const got = await take(events, 11);
    const strip = got.map(({ eventId, ...e }) => (assert.match(eventId, /^\d+$/), e));
    assert.deepEqual(strip, [
      { type: 'scheduled', id: 'a', topic: 't', attempt: 0, at: T0, runAt: T0 },
      { type: 'scheduled', id: 'b', topic: 't', attempt: 0, at: T0, runAt: T0 + 5_000 },
      { type: 'rescheduled', id: 'b', topic: 't', attempt: null, at: T0, runAt: T0 + 6_000 },
      { type: 'cancelled', id: 'b', topic: 't', attempt: null, at: T0 },
      { type: 'delivered', id: 'a', topic: 't', attempt: 1, at: T0 },
      { type: 'failed', id: 'a', topic: 't', attempt: 1, at: T0, nextRunAt: T0 + 1_000, error: 'boom' },
      { type: 'delivered', id: 'a', topic: 't', attempt: 2, at: T0 + 1_000 },
      { type: 'dead', id: 'a', topic: 't', attempt: 2, at: T0 + 1_000, error: 'again' },
      { type: 'rescheduled', id: 'a', topic: 't', attempt: 0, at: T0 + 1_000, runAt: T0 + 1_000 },
      { type: 'delivered', id: 'a', topic: 't', attempt: 1, at: T0 + 1_000 },
      { type: 'acked', id: 'a', topic: 't', attempt: 1, at: T0 + 1_000 },
    ]);
    // Ids increase.
    assert.deepEqual(got.map((e) => Number(e.eventId)), [...got.map((e) => Number(e.eventId))].sort((x, y) => x - y));
  });

  it('filters by topic and types, and resumes after an event id', async () => {
    const opened = await openManual({ events: true });
    q = opened.q;
    const all = q.events();
    const filtered = q.events({ topic: 'x', types: 'scheduled,cancelled' });
    await q.schedule({ topic: 'x', id: 'x1', delayMs: 10_000 });
    await q.schedule({ topic: 'y', id: 'y1', delayMs: 10_000 });
    await q.cancel('x1');
    await q.cancel('y1');
    const seen = await take(all, 4);
    assert.deepEqual((await take(filtered, 2)).map((e) => `${e.type}:${e.id}`), ['scheduled:x1', 'cancelled:x1']);
    const resumed = q.events({ after: seen[1]!.eventId });
    assert.deepEqual((await take(resumed, 2)).map((e) => e.eventId), [seen[2]!.eventId, seen[3]!.eventId]);
    await resumed.return?.();
  });

  it('tells a handler\'s ack and a reservation that expired', async () => {
    const opened = await openManual({ events: true });
    q = opened.q;
    const events = q.events({ types: ['acked', 'failed'] });
    await q.schedule({ topic: 'w', id: 'exp', delayMs: 0, ttrMs: 1_000 });
    await q.reserve('w');
    opened.clock.advance(1_000);
    await flush();
    const [failed] = await take(events, 1);
    assert.equal(failed?.type, 'failed');
    assert.equal(failed?.error, 'reservation expired (ttr)');
    assert.equal(failed?.nextRunAt, T0 + 1_000);
    q.work('w', async () => undefined);
    opened.clock.advance(1);
    const [acked] = await take(events, 1);
    assert.deepEqual([acked?.type, acked?.id, acked?.attempt], ['acked', 'exp', 2]);
  });

  it('refuses events() when off, and a bad filter or id', async () => {
    const off = await openManual();
    assert.throws(() => off.q.events(), (e) => isDelayQError(e, 'INVALID_OPTION'));
    await off.q.close();
    q = (await openManual({ events: true })).q;
    assert.throws(() => q!.events({ types: 'nope' }), (e) => isDelayQError(e, 'INVALID_ARGUMENT'));
    assert.throws(() => q!.events({ topic: 'a b' }), (e) => isDelayQError(e, 'INVALID_ARGUMENT'));
    assert.throws(() => q!.events({ after: '1-0' }), (e) => isDelayQError(e, 'INVALID_ARGUMENT'));
  });

  it('ends its iterators when the queue closes', async () => {
    const opened = await openManual({ events: true });
    const it = opened.q.events();
    const next = it.next();
    await opened.q.close();
    assert.deepEqual(await next, { value: undefined, done: true });
  });
});
