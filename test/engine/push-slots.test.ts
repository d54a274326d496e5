/** The push slots' waiting: a line per key served fewest-held first, timed by a ManualClock; room watchers. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import { PushSlots } from '../../src/engine/push/push-slots.js';

/** Settles the promise callbacks queued so far. */
const settle = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function takeAll(slots: PushSlots, key: string): number {
  let taken = 0;
  while (slots.tryTake(key)) taken++;
  return taken;
}

describe('PushSlots', () => {
  it("a push that finds no slot waits in its key's line, first come first served, and is given the slot released", async () => {
    const clock = new ManualClock();
    const slots = new PushSlots(2, clock);
    assert.equal(takeAll(slots, 'a'), 1);
    assert.equal(takeAll(slots, 'b'), 1);
    const order: string[] = [];
    const first = slots.take('b', 1_000).then((taken) => order.push(`first ${taken}`));
    const second = slots.take('b', 1_000).then((taken) => order.push(`second ${taken}`));
    assert.equal(slots.queued, 2);
    slots.release('b');
    await first;
    assert.deepEqual(order, ['first true']);
    slots.release('b');
    await second;
    assert.deepEqual(order, ['first true', 'second true']);
    assert.deepEqual([slots.inFlight, slots.queued, clock.pendingTimers], [2, 0, 0]);
  });

  it('a freed slot goes to the waiting key that holds the fewest, among those under their share', async () => {
    const slots = new PushSlots(4, new ManualClock());
    assert.equal(slots.tryTake('a') && slots.tryTake('a'), true);
    assert.equal(slots.tryTake('b'), true);
    assert.equal(slots.tryTake('c'), true);
    const got: string[] = [];
    const b = slots.take('b', 1_000).then((taken) => taken && got.push('b'));
    const d = slots.take('d', 1_000).then((taken) => taken && got.push('d'));
    // a, b, c and d busy: shares of ceil(4 / 5) = 1. b waited first, but holds its share already.
    slots.release('a');
    await settle();
    assert.deepEqual(got, ['d']);
    slots.release('a');
    await settle();
    assert.deepEqual(got, ['d']);
    // c goes idle: 2 busy keys (b, d), shares of 2, and b is under it.
    slots.release('c');
    await Promise.all([b, d]);
    assert.deepEqual(got, ['d', 'b']);
    assert.deepEqual([slots.held('b'), slots.held('d'), slots.queued], [2, 1, 0]);
  });

  it('a wait that runs out ends without a slot, and the key stops counting as busy', async () => {
    const clock = new ManualClock();
    const slots = new PushSlots(6, clock);
    assert.equal(takeAll(slots, 'a'), 3);
    assert.equal(takeAll(slots, 'b'), 2);
    assert.equal(takeAll(slots, 'c'), 1);
    const waited = slots.take('c', 2_500);
    // a, b, c and nobody else: c's share is ceil(6 / 4) = 2, no slot is free.
    clock.advance(2_499);
    await settle();
    assert.equal(slots.queued, 1);
    clock.advance(1);
    assert.equal(await waited, false);
    assert.deepEqual([slots.held('c'), slots.queued], [1, 0]);
  });

  it('a worker waiting for room wakes when its key has room again, or when its signal aborts', async () => {
    const slots = new PushSlots(5, new ManualClock());
    assert.equal(slots.tryTake('a'), true);
    assert.equal(takeAll(slots, 'b'), 2);
    assert.equal(takeAll(slots, 'c'), 2);
    // Every slot is held; a is under its share (2) but finds none free.
    assert.equal(slots.room('a'), 0);
    let woke = false;
    const watching = slots.whenRoom('a', new AbortController().signal).then(() => (woke = true));
    await settle();
    assert.equal(woke, false);
    slots.release('b');
    await watching;
    assert.equal(slots.room('a'), 1);
    const controller = new AbortController();
    const aborted = slots.whenRoom('b', controller.signal);
    assert.equal(slots.tryTake('a'), true);
    controller.abort();
    await aborted;
  });

  it('close: waiting pushes end without a slot, watchers wake, no slot is given any more; releases still count', async () => {
    const clock = new ManualClock();
    const slots = new PushSlots(1, clock);
    assert.equal(slots.tryTake('a'), true);
    const waiting = slots.take('a', 60_000);
    const watching = slots.whenRoom('b', new AbortController().signal);
    slots.close();
    assert.equal(await waiting, false);
    await watching;
    // From now on a worker waits for its own close, not in a loop.
    const controller = new AbortController();
    let ended = false;
    const closing = slots.whenRoom('b', controller.signal).then(() => (ended = true));
    await settle();
    assert.equal(ended, false);
    controller.abort();
    await closing;
    assert.equal(clock.pendingTimers, 0);
    slots.release('a');
    assert.deepEqual([slots.inFlight, slots.room('a'), slots.tryTake('a'), await slots.take('a', 1)], [0, 0, false, false]);
  });
});
