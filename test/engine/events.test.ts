import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { decodeTaskEvent, type EventDropReason, type TaskEvent } from '../../src/core/events.js';
import { silentLogger } from '../../src/core/logger.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { TaskEventLog } from '../../src/core/ports/index.js';
import { EventFeed } from '../../src/engine/events/event-feed.js';
import { EventPublisher } from '../../src/engine/events/event-publisher.js';
import { RingEventLog } from '../../src/engine/events/ring-log.js';
import { InFlight } from '../../src/engine/in-flight.js';
import type { DelayQueue } from '../../src/open-queue.js';
import { T0, flush, openManual } from '../helpers/engine.js';
import { take } from '../helpers/events.js';

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
    const strip = got.map(({ eventId, ...e }) => (assert.match(eventId, new RegExp(`^${T0}-\\d+$`)), e));
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
    assert.deepEqual(got.map((e) => e.eventId), got.map((_, i) => `${T0}-${i + 1}`));
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
    assert.throws(() => q!.events({ topic: 'a b' }), (e) => isDelayQError(e, 'INVALID_TOPIC'));
    assert.throws(() => q!.events({ after: '1-0-0' }), (e) => isDelayQError(e, 'INVALID_ARGUMENT'));
  });

  it('ends its iterators when the queue closes', async () => {
    const opened = await openManual({ events: true });
    const it = opened.q.events();
    const next = it.next();
    await opened.q.close();
    assert.deepEqual(await next, { value: undefined, done: true });
  });
});

const event = (i: number): TaskEvent => ({ type: 'scheduled', id: `t${i}`, topic: 't', attempt: 0, at: i, runAt: i });

function counting(): { dropped: Map<EventDropReason, number>; count: (reason: EventDropReason, n: number) => void } {
  const dropped = new Map<EventDropReason, number>();
  return { dropped, count: (reason, n) => void dropped.set(reason, (dropped.get(reason) ?? 0) + n) };
}

describe('lifecycle events: bounds', () => {
  it('the publisher never holds more than its buffer: the rest is dropped and counted, and a failed write is counted too', async () => {
    let release!: () => void;
    let fail = false;
    const written: TaskEvent[] = [];
    const ring = new RingEventLog(10, T0);
    const log: TaskEventLog = {
      retain: 10,
      read: (after, limit) => ring.read(after, limit),
      latest: () => ring.latest(),
      parseId: (id) => ring.parseId(id),
      append: async (events) => {
        await new Promise<void>((r) => (release = r));
        if (fail) throw new Error('down');
        written.push(...events);
      },
    };
    const { dropped, count } = counting();
    const publisher = new EventPublisher({ log, logger: silentLogger, inFlight: new InFlight(), maxBuffered: 100, batch: 30, dropped: count, appended: () => undefined });
    // The first batch goes out and hangs; 100 more wait; the rest is dropped.
    for (let i = 0; i < 1; i++) publisher.emit(event(i));
    await flush(2);
    for (let i = 1; i < 151; i++) publisher.emit(event(i));
    assert.equal(dropped.get('overflow'), 50);
    release();
    await flush(2);
    fail = true;
    release();
    await flush(2);
    fail = false;
    const drained = publisher.drain();
    for (let i = 0; i < 5; i++) {
      release();
      await flush(2);
    }
    await drained;
    assert.equal(dropped.get('store'), 30);
    // Written in order: the first, then the 100 buffered but the 30 of the failed batch.
    assert.deepEqual(written.map((e) => e.id), ['t0', ...Array.from({ length: 70 }, (_, i) => `t${i + 31}`)]);
  });

  it('a subscriber that reads nothing holds a bounded buffer: the feed stops reading for it, and resumes where it stopped', async () => {
    const log = new RingEventLog(100_000, T0);
    const clock = new ManualClock(T0);
    const { count } = counting();
    const feed = new EventFeed({ log, clock, logger: silentLogger, pollMs: 100, readLimit: 50, maxBuffered: 200, dropped: count });
    const slow = feed.subscribe({ topic: null, types: null }, null);
    await log.append(Array.from({ length: 5_000 }, (_, i) => event(i)));
    for (let i = 0; i < 20; i++) {
      feed.wake();
      await flush(3);
    }
    const held = (slow as unknown as { buffer: unknown[] }).buffer.length;
    assert.ok(held >= 200 && held < 250, `holds ${held}`);
    // Read all of it in order: nothing lost (the log kept it).
    const got = await take(slow, 5_000);
    assert.deepEqual(got.map((e) => e.id), Array.from({ length: 5_000 }, (_, i) => `t${i}`));
    feed.stop();
  });

  it('decodes only what delayq writes', () => {
    const good = { type: 'failed', id: 'a', topic: 't', attempt: 2, at: 5, nextRunAt: 9, error: 'x' };
    assert.deepEqual(decodeTaskEvent(JSON.stringify({ ...good, extra: 1 })), good);
    for (const bad of [
      'nope',
      '[]',
      'null',
      JSON.stringify({ ...good, type: 'toString' }),
      JSON.stringify({ ...good, type: '__proto__' }),
      JSON.stringify({ ...good, id: 'a b' }),
      JSON.stringify({ ...good, topic: '' }),
      JSON.stringify({ ...good, attempt: -1 }),
      JSON.stringify({ ...good, attempt: 1.5 }),
      JSON.stringify({ ...good, at: '5' }),
      JSON.stringify({ ...good, nextRunAt: null }),
      JSON.stringify({ ...good, error: 7 }),
      JSON.stringify({ ...good, error: 'e'.repeat(3_000) }),
      'x'.repeat(20_000),
    ])
      assert.equal(decodeTaskEvent(bad), null, bad.slice(0, 80));
  });
});
