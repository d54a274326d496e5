import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { LoggedTaskEvent } from '../../src/core/events.js';
import { DelayQueue } from '../../src/open-queue.js';
import { Registry } from 'prom-client';

/** Takes `n` events from an iterator, failing after `waitMs` without them. */
export async function take(it: AsyncIterator<LoggedTaskEvent>, n: number, waitMs = 10_000): Promise<LoggedTaskEvent[]> {
  const out: LoggedTaskEvent[] = [];
  while (out.length < n) {
    let timer: NodeJS.Timeout | undefined;
    const next = await Promise.race([it.next(), new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), waitMs)))]);
    clearTimeout(timer);
    if (next === 'timeout') throw new Error(`only ${out.length} of ${n} events: ${JSON.stringify(out)}`);
    if (next.done === true) break;
    out.push(next.value);
  }
  return out;
}

export interface SharedEventsStore {
  /** The store URL (with its options) two queues open. */
  readonly url: string;
  /** Writes entries to the store's log that are not events (garbage, as if written around delayq). */
  writeGarbage(): Promise<number>;
  cleanup(): Promise<void>;
}

/** Two queues on one shared store, each seeing the other's events; resume; bad entries dropped and counted. */
export function sharedEventsTests(open: () => Promise<SharedEventsStore>): void {
  it('every process sees the events of all, in one order, and resumes after an event id', async () => {
    const store = await open();
    const registry = new Registry();
    const a = await DelayQueue.open({ store: store.url, events: true, metrics: { registry } });
    const b = await DelayQueue.open({ store: store.url, events: true });
    try {
      const seenByA = a.events({ types: ['scheduled', 'cancelled'] });
      const seenByB = b.events({ types: ['scheduled', 'cancelled'] });
      // Let both subscribers find where the log ends before anything is written.
      await new Promise((r) => setTimeout(r, 600));
      await a.schedule({ topic: 'ev', id: 'from-a', delayMs: 60_000 });
      await b.schedule({ topic: 'ev', id: 'from-b', delayMs: 60_000 });
      await b.cancel('from-a');
      const gotA = await take(seenByA, 3);
      const gotB = await take(seenByB, 3);
      assert.deepEqual(gotA.map((e) => `${e.type}:${e.id}`).sort(), ['cancelled:from-a', 'scheduled:from-a', 'scheduled:from-b']);
      // The same log: the same events with the same ids, in the same order, in both processes.
      assert.deepEqual(gotB, gotA);
      const cancel = gotA.find((e) => e.type === 'cancelled')!;
      assert.deepEqual([cancel.topic, cancel.attempt], ['ev', null]);
      // Resume after the first: the two after it.
      const resumed = b.events({ after: gotA[0]!.eventId, types: 'scheduled,cancelled' });
      assert.deepEqual((await take(resumed, 2)).map((e) => e.eventId), [gotA[1]!.eventId, gotA[2]!.eventId]);
      await resumed.return?.();

      // Entries that are not events: skipped and counted, and the stream goes on past them.
      const garbage = await store.writeGarbage();
      await a.schedule({ topic: 'ev', id: 'after-garbage', delayMs: 60_000 });
      const [next] = await take(seenByA, 1);
      assert.equal(next?.id, 'after-garbage');
      assert.match(await registry.metrics(), new RegExp(`^delayq_events_dropped_total\\{reason="invalid"\\} ${garbage}$`, 'm'));
      assert.throws(() => a.events({ after: 'not-an-id' }), /after: not an event id/);

      // Many writes, read in the log's order: each once, none skipped (ids past 9 and 99 too).
      const many = b.events({ topic: 'many' });
      await new Promise((r) => setTimeout(r, 600));
      for (let i = 0; i < 120; i++) await a.schedule({ topic: 'many', id: `m${i}`, delayMs: 60_000 });
      const got = await take(many, 120);
      assert.deepEqual(got.map((e) => e.id), Array.from({ length: 120 }, (_, i) => `m${i}`));
      assert.deepEqual(got.map((e) => e.eventId), [...new Set(got.map((e) => e.eventId))]);
      await many.return?.();
    } finally {
      await a.close();
      await b.close();
      await store.cleanup();
    }
  });
}
