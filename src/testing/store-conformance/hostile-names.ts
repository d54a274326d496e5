/**
 * Names a store must hold like any other (issue 45): every one is a valid topic and id
 * (`[A-Za-z0-9._:-]`), and each is a name JavaScript, a driver or delayq itself gives a
 * meaning to. On a plain `{}`, `__proto__` is the prototype's setter and `constructor`,
 * `toString`, `hasOwnProperty`... read as functions before anything was stored; `then`
 * makes an object a thenable; the others are field names of delayq's own records (states,
 * limits) and metric labels. The store suite (`hostileNameCases`) and the property tests over
 * every store and over HTTP draw from this list.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { own } from '../../core/dict.js';
import type { TopicLimits } from '../../core/flow/limits.js';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, pushSubscription, scheduleRecord, task } from './fixtures.js';

export const HOSTILE_NAMES: readonly string[] = [
  // Object.prototype, every member (the accessor `__proto__` first).
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'toLocaleString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  '__defineGetter__',
  '__defineSetter__',
  '__lookupGetter__',
  '__lookupSetter__',
  // Function and thenable members, and what arrays and strings answer.
  'then',
  'call',
  'apply',
  'bind',
  'length',
  'name',
  // delayq's own field names: task states, flow limits, metric labels.
  'pending',
  'reserved',
  'completed',
  'dead',
  'cancelled',
  'rate',
  'burst',
  'periodMs',
  'concurrency',
  'topic',
  'state',
  '_other',
  '_unknown',
  // Numbers, and words other languages (Lua, SQL, JSON) give a meaning to.
  '0',
  '-1',
  'NaN',
  'Infinity',
  '__index',
  'nil',
  'null',
  'undefined',
  'true',
];

const LIMITS: TopicLimits = { rate: 10, periodMs: 1_000, burst: 5, concurrency: 2 };

/** `store` is the store of the case running: a fresh one for each. */
export function hostileNameCases(store: TaskStore): void {
  describe('names like __proto__ and constructor', () => {
    it('tasks with such topics and ids are scheduled, counted, listed, reserved and acked like any other', async () => {
      const tasks = HOSTILE_NAMES.map((name, i) => task(name, { topic: HOSTILE_NAMES[(i + 1) % HOSTILE_NAMES.length]!, runAt: T0 + i }));
      const outcomes = await store.tasks.schedule(tasks, T0);
      assert.ok(outcomes.every((o) => o.created));
      const stats = await store.tasks.stats();
      assert.equal(stats.byState.pending, HOSTILE_NAMES.length);
      assert.deepEqual(Object.keys(stats.byTopic).sort(), [...HOSTILE_NAMES].sort());
      for (const name of HOSTILE_NAMES) {
        assert.ok(Object.hasOwn(stats.byTopic, name), `stats has topic ${name}`);
        assert.deepEqual({ ...own(stats.byTopic, name) }, { pending: 1 }, `stats of topic ${name}`);
        assert.equal((await store.tasks.get(name))?.id, name);
        assert.deepEqual((await store.tasks.list({ topic: name, limit: 10 })).map((r) => r.topic), [name]);
      }
      assert.equal(Object.getPrototypeOf({}), Object.prototype);
      assert.equal(({} as Record<string, unknown>)['pending'], undefined, 'Object.prototype was written');

      const reserved = await store.tasks.reserve(HOSTILE_NAMES, T0 + HOSTILE_NAMES.length);
      assert.deepEqual(reserved.map((r) => r.id), HOSTILE_NAMES);
      const acks = await store.tasks.ackMany(reserved.map((r) => ({ id: r.id, receipt: r.receipt! })), T0 + 100);
      assert.ok(acks.every((a) => a.status === 'acked'));
      const after = await store.tasks.stats();
      assert.equal(after.byState.completed, HOSTILE_NAMES.length);
      for (const name of HOSTILE_NAMES) assert.deepEqual({ ...own(after.byTopic, name) }, { completed: 1 }, `stats of topic ${name}`);
    });

    it('limits, pauses and push subscriptions of such topics are kept per topic, and no other topic gets them', async () => {
      for (const name of HOSTILE_NAMES) {
        await store.topics.setTopicLimits(name, LIMITS);
        await store.topics.setTopicPaused(name, true);
        await store.push.putPushSubscription(pushSubscription(name, { headers: { [name.toLowerCase().replace(/[^a-z0-9-]/g, 'x')]: 'v' } }));
      }
      const limits = (await store.topics.topicLimits()).limits;
      assert.deepEqual(Object.keys(limits).sort(), [...HOSTILE_NAMES].sort());
      for (const name of HOSTILE_NAMES) assert.deepEqual(own(limits, name), LIMITS, `limits of ${name}`);
      assert.equal(Object.hasOwn(limits, 'mail'), false);
      assert.deepEqual([...(await store.topics.pausedTopics()).topics].sort(), [...HOSTILE_NAMES].sort());
      assert.deepEqual((await store.push.listPushSubscriptions()).map((s) => s.topic).sort(), [...HOSTILE_NAMES].sort());
      for (const name of HOSTILE_NAMES) assert.equal((await store.push.getPushSubscription(name))?.topic, name);
      assert.equal(await store.push.getPushSubscription('mail'), null);

      // A topic's flow is its own: a limited hostile name lends its buckets to no other topic.
      assert.equal((await store.topics.admitFlow({ topic: '__proto__', limits: LIMITS, want: 9, holder: 'h1', holdUntil: T0 + 10_000, now: T0 })).granted, 2);
      assert.equal((await store.topics.admitFlow({ topic: 'constructor', limits: LIMITS, want: 9, holder: 'h2', holdUntil: T0 + 10_000, now: T0 })).granted, 2);
      for (const name of HOSTILE_NAMES) {
        await store.topics.setTopicLimits(name, null);
        await store.topics.setTopicPaused(name, false);
        assert.equal(await store.push.deletePushSubscription(name), true);
      }
      assert.deepEqual({ ...(await store.topics.topicLimits()).limits }, {});
      assert.deepEqual((await store.topics.pausedTopics()).topics, []);
    });

    it('recurring schedules with such ids and topics are kept like any other', async () => {
      for (const name of HOSTILE_NAMES) await store.schedules.putSchedule(scheduleRecord(name, { topic: name }));
      const listed = await store.schedules.listSchedules();
      assert.deepEqual(listed.map((s) => s.id).sort(), [...HOSTILE_NAMES].sort());
      for (const name of HOSTILE_NAMES) assert.equal((await store.schedules.getSchedule(name))?.topic, name);
    });

    it('a topic purge of such a topic removes its tasks only', async () => {
      await store.tasks.schedule([task('a', { topic: '__proto__', runAt: T0 + 10 }), task('b', { topic: 'constructor', runAt: T0 + 10 })], T0);
      const deleted: string[] = [];
      let cursor: string | null = null;
      do {
        const step = await store.tasks.purgeTopic({ topic: '__proto__', state: 'pending', cursor, limit: 100 });
        deleted.push(...step.ids);
        cursor = step.next;
      } while (cursor !== null);
      assert.deepEqual(deleted, ['a']);
      assert.equal(await store.tasks.get('a'), null);
      assert.equal((await store.tasks.get('b'))?.state, 'pending');
    });
  });
}
