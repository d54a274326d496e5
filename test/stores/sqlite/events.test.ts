// Lifecycle events on SQLite: the engine's ring in the process's memory. An id kept from
// before a restart is not taken for one of the new ring's (which counts from 1 again): a
// reader resuming after it starts at the oldest event kept, and skips none.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DelayQueue } from '../../../src/open-queue.js';
import { take } from '../../helpers/events.js';

describe('lifecycle events on SQLite', () => {
  it('tells the transitions, and after a restart a kept id skips no new event', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-events-'));
    const store = `sqlite:${join(dir, 'q.db')}`;
    try {
      const first = await DelayQueue.open({ store, events: true });
      const before = first.events();
      for (let i = 0; i < 5; i++) await first.schedule({ topic: 's', id: `a${i}`, delayMs: 60_000 });
      const seen = await take(before, 5);
      assert.deepEqual(seen.map((e) => e.id), ['a0', 'a1', 'a2', 'a3', 'a4']);
      await first.close();

      const second = await DelayQueue.open({ store, events: true });
      try {
        const resumed = second.events({ after: seen[1]!.eventId });
        await second.cancel('a0');
        await second.schedule({ topic: 's', id: 'b0', delayMs: 60_000 });
        await second.schedule({ topic: 's', id: 'b1', delayMs: 60_000 });
        const got = await take(resumed, 3);
        assert.deepEqual(got.map((e) => `${e.type}:${e.id}`), ['cancelled:a0', 'scheduled:b0', 'scheduled:b1']);
        // A ring of its own: another epoch, counting from 1 again.
        const epochOf = (id: string): string => id.split('-')[0]!;
        assert.notEqual(epochOf(got[0]!.eventId), epochOf(seen[0]!.eventId));
        assert.deepEqual(got.map((e) => e.eventId.split('-')[1]), ['1', '2', '3']);
      } finally {
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
