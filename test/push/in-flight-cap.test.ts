import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InFlightCap } from '../../src/push/in-flight-cap.js';

describe('InFlightCap', () => {
  it('grants up to its limit, then queues in arrival order, handing each released slot to the next', async () => {
    const cap = new InFlightCap(2);
    assert.equal(await cap.acquire(), true);
    assert.equal(await cap.acquire(), true);
    const order: number[] = [];
    const third = cap.acquire().then(() => order.push(3));
    const fourth = cap.acquire().then(() => order.push(4));
    assert.deepEqual([cap.inFlight, cap.queued], [2, 2]);
    cap.release();
    await third;
    assert.deepEqual(order, [3]);
    assert.deepEqual([cap.inFlight, cap.queued], [2, 1]);
    cap.release();
    await fourth;
    assert.deepEqual(order, [3, 4]);
    cap.release();
    cap.release();
    assert.deepEqual([cap.inFlight, cap.queued], [0, 0]);
  });

  it('a waiter whose signal aborts leaves the queue without a slot', async () => {
    const cap = new InFlightCap(1);
    await cap.acquire();
    const controller = new AbortController();
    const waiting = cap.acquire(controller.signal);
    controller.abort();
    assert.equal(await waiting, false);
    assert.deepEqual([cap.inFlight, cap.queued], [1, 0]);
    assert.equal(await cap.acquire(AbortSignal.abort()), false);
    cap.release();
    assert.equal(cap.inFlight, 0);
  });

  it('a waiter past its maxWaitMs leaves the queue without a slot; one granted in time keeps it', async () => {
    const cap = new InFlightCap(1);
    assert.equal(cap.tryAcquire(), true);
    assert.equal(cap.tryAcquire(), false);
    assert.equal(await cap.acquire(undefined, 20), false);
    assert.deepEqual([cap.inFlight, cap.queued], [1, 0]);
    const granted = cap.acquire(undefined, 60_000);
    cap.release();
    assert.equal(await granted, true);
    assert.deepEqual([cap.inFlight, cap.queued], [1, 0]);
    cap.release();
    assert.equal(cap.inFlight, 0);
  });

  it('refuses a limit that is not a positive integer', () => {
    for (const limit of [0, -1, 1.5, Number.NaN]) assert.throws(() => new InFlightCap(limit), RangeError);
  });
});
