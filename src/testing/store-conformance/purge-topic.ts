/** The store suite's cases of "purge a topic" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskRoles, TaskStore, TopicPurgeState } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import { T0, task, loadAll } from './fixtures.js';

const DAY = 86_400_000;

/** Runs a whole pass in steps of `limit`, checking each step keeps to it; the ids deleted, sorted. */
export async function purgeTopicPass(store: TaskStore, topic: string, state: TopicPurgeState, limit: number, runs: TimerRef[] = []): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let steps = 0; ; steps++) {
    assert.ok(steps < 10_000, 'a pass ends');
    const step = await store.tasks.purgeTopic({ topic, state, cursor, limit });
    assert.ok(step.ids.length <= limit, `a step deletes at most ${limit}, not ${step.ids.length}`);
    ids.push(...step.ids);
    runs.push(...step.runs);
    if (state !== 'pending') assert.deepEqual(step.runs, [], 'only pending tasks have run timers');
    if (step.next === null) return ids.sort();
    cursor = step.next;
  }
}

/** `store` is the store of the case running: a fresh one for each. */
export function purgeTopicCases(store: TaskStore): void {
  describe('purge a topic', () => {
    /** Topic `gone`: 7 pending (one far ahead, parked by a disk store), one each reserved, dead, completed, cancelled; topic `kept`: the same. */
    async function populate(): Promise<{ pendingRef: Awaited<ReturnType<TaskRoles['schedule']>>[number]; refs: Map<string, TimerRef> }> {
      await store.tasks.loadDue(T0 + 60_000, null, 100);
      const batch = [];
      for (const topic of ['gone', 'kept']) {
        for (let i = 1; i <= 6; i++) batch.push(task(`${topic}-p${i}`, { topic, runAt: T0 + i * 1_000 }));
        batch.push(task(`${topic}-far`, { topic, runAt: T0 + 40 * DAY }));
        for (const s of ['r', 'd', 'c', 'x']) batch.push(task(`${topic}-${s}`, { topic, runAt: T0, maxAttempts: 1 }));
      }
      const outcomes = await store.tasks.schedule(batch, T0 - 1_000);
      for (const topic of ['gone', 'kept']) {
        const claimed = await store.tasks.reserve([`${topic}-r`, `${topic}-d`, `${topic}-c`], T0);
        assert.equal(claimed.length, 3);
        const receipt = (id: string): string => claimed.find((c) => c.id === id)!.receipt!;
        assert.equal((await store.tasks.nack({ id: `${topic}-d`, receipt: receipt(`${topic}-d`), now: T0 + 1, random: 0 })).status, 'dead');
        assert.equal((await store.tasks.ack(`${topic}-c`, receipt(`${topic}-c`), T0 + 1)).status, 'acked');
        assert.equal((await store.tasks.cancel(`${topic}-x`, T0 + 1)).status, 'cancelled');
      }
      return { pendingRef: outcomes[0]!, refs: new Map(outcomes.map((o) => [o.id, o.ref!])) };
    }

    it('deletes the pending tasks of one topic, a bounded step at a time, and nothing else; their ids are free again', async () => {
      const { pendingRef, refs } = await populate();
      const runs: TimerRef[] = [];
      const purged = await purgeTopicPass(store, 'gone', 'pending', 2, runs);
      assert.deepEqual(purged, ['gone-far', 'gone-p1', 'gone-p2', 'gone-p3', 'gone-p4', 'gone-p5', 'gone-p6']);
      // The run timers of the deleted tasks, as the store handed them out: same id, seq and due time.
      assert.deepEqual(
        runs.map((r) => [r.id, r.kind, r.seq, r.dueAt, r.topic]).sort(),
        purged.map((id) => [id, 'run', refs.get(id)!.seq, refs.get(id)!.dueAt, 'gone']).sort(),
      );
      for (const id of purged) assert.equal(await store.tasks.get(id), null, id);
      for (const s of ['r', 'd', 'c', 'x']) assert.notEqual(await store.tasks.get(`gone-${s}`), null, `gone-${s} is not pending: kept`);
      assert.equal((await store.tasks.list({ topic: 'kept', state: 'pending', limit: 100 })).length, 7, 'another topic is untouched');
      const stats = await store.tasks.stats();
      assert.deepEqual(stats.byTopic['gone'], { reserved: 1, dead: 1, completed: 1, cancelled: 1 }, 'the counters moved with the deletes');
      assert.equal(stats.byTopic['kept']?.pending, 7);
      assert.equal(stats.byState.pending, 7);
      // Never delivered: out of the due index, out of the parked tasks, refused by their refs.
      const due = await loadAll(store, Number.POSITIVE_INFINITY);
      assert.deepEqual(due.filter((ref) => ref.id.startsWith('gone-p') || ref.id === 'gone-far'), []);
      assert.deepEqual(await store.tasks.reserveRefs([pendingRef.ref!], T0 + DAY), [], 'a ref handed out before the purge reserves nothing');
      assert.deepEqual(await store.tasks.reserve(['gone-p1', 'gone-far'], T0 + 50 * DAY), []);
      const far = await store.tasks.dueHistogram({ from: T0, to: T0 + 41 * DAY, bucketMs: DAY, topic: 'gone' });
      if (far.coveredUntil === T0 + 41 * DAY) assert.equal(far.counts.reduce((a, b) => a + b, 0), 0, 'no parked task counted');
      const all = await store.tasks.dueHistogram({ from: T0, to: T0 + 41 * DAY, bucketMs: DAY });
      if (all.coveredUntil === T0 + 41 * DAY) assert.equal(all.counts.reduce((a, b) => a + b, 0), 7, 'only the other topic\'s pending tasks');
      const [again] = await store.tasks.schedule([task('gone-p1', { topic: 'gone' })], T0 + 2);
      assert.equal(again!.created, true, 'the id is free again');
    });

    it('deletes dead tasks, then completed and cancelled ones together; a topic with nothing left leaves the stats', async () => {
      await populate();
      assert.deepEqual(await purgeTopicPass(store, 'gone', 'dead', 1), ['gone-d']);
      assert.deepEqual(await purgeTopicPass(store, 'gone', 'completed', 1), ['gone-c', 'gone-x'], "'completed' also takes the cancelled ones");
      assert.deepEqual(await purgeTopicPass(store, 'gone', 'completed', 5), [], 'a second pass finds nothing');
      assert.deepEqual(await purgeTopicPass(store, 'nothing-here', 'pending', 5), []);
      assert.equal(await store.tasks.get('gone-r').then((t) => t?.state), 'reserved', 'a reserved task is never purged');
      assert.deepEqual(await purgeTopicPass(store, 'gone', 'pending', 100), ['gone-far', 'gone-p1', 'gone-p2', 'gone-p3', 'gone-p4', 'gone-p5', 'gone-p6']);
      assert.deepEqual((await store.tasks.stats()).byTopic['gone'], { reserved: 1 });
      const [r] = await store.tasks.list({ topic: 'gone', state: 'reserved', limit: 1 });
      assert.equal((await store.tasks.ack('gone-r', r!.receipt!, T0 + 2)).status, 'acked');
      assert.deepEqual(await purgeTopicPass(store, 'gone', 'completed', 100), ['gone-r']);
      const stats = await store.tasks.stats();
      assert.equal(stats.byTopic['gone'], undefined, 'the topic has no task left: the stats no longer name it');
      assert.deepEqual(stats.byTopic['kept'], { pending: 7, reserved: 1, dead: 1, completed: 1, cancelled: 1 });
      assert.deepEqual(await purgeTopicPass(store, 'kept', 'dead', 100), ['kept-d']);
    });
  });
}
