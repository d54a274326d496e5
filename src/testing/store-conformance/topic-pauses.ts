/** The store suite's cases of "pause a topic" (runStoreConformance, ./index.ts; ADR 0040). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function topicPauseCases(store: TaskStore): void {
  describe('pause a topic', () => {
    it('a fresh store has no paused topic', async () => {
      assert.deepEqual((await store.topics.pausedTopics()).topics, []);
    });

    it('pause and resume change the set, listed in topic order, and move the version', async () => {
      const v0 = (await store.topics.pausedTopics()).version;
      assert.equal(await store.topics.setTopicPaused('mail', true), true);
      assert.equal(await store.topics.setTopicPaused('billing', true), true);
      const paused = await store.topics.pausedTopics();
      assert.deepEqual(paused.topics, ['billing', 'mail']);
      assert.notEqual(paused.version, v0);

      assert.equal(await store.topics.setTopicPaused('mail', false), true);
      const resumed = await store.topics.pausedTopics();
      assert.deepEqual(resumed.topics, ['billing']);
      assert.notEqual(resumed.version, paused.version);
    });

    it('a pause of a paused topic, or a resume of one not paused, changes nothing and answers false', async () => {
      await store.topics.setTopicPaused('mail', true);
      assert.equal(await store.topics.setTopicPaused('mail', true), false);
      assert.equal(await store.topics.setTopicPaused('other', false), false);
      assert.deepEqual((await store.topics.pausedTopics()).topics, ['mail']);
    });

    it('an unchanged set keeps its version between reads', async () => {
      await store.topics.setTopicPaused('mail', true);
      const a = await store.topics.pausedTopics();
      const b = await store.topics.pausedTopics();
      assert.equal(a.version, b.version);
    });

    it('a paused topic still takes tasks, and its tasks keep their due times', async () => {
      await store.topics.setTopicPaused('mail', true);
      const [outcome] = await store.tasks.schedule([task('m1', { topic: 'mail', runAt: T0 + 5_000 })], T0);
      assert.equal(outcome?.created, true);
      const got = await store.tasks.get('m1');
      assert.equal(got?.runAt, T0 + 5_000);
      assert.equal(got?.state, 'pending');
    });
  });
}
