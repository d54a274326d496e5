// q.topics.purge on the engine: bounded steps with turns between them, the run timers of
// purged tasks forgotten (never a new task's of a freed id), checked input.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import type { TopicPurgeState } from '../../src/core/ports/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { PURGE_STEP } from '../../src/engine/topics/topics.js';
import { flush, openManual } from '../helpers/engine.js';

test('purge pending: the tasks are gone, their timers too; an id purged and scheduled again fires once, on time', async () => {
  const { q, clock } = await openManual();
  try {
    await q.scheduleMany([
      { id: 'p1', topic: 'gone', delayMs: 1_000 },
      { id: 'p2', topic: 'gone', delayMs: 2_000 },
      { id: 'k1', topic: 'kept', delayMs: 1_000 },
    ]);
    const timers = (await q.stats()).timers;
    assert.equal(await q.topics.purge('gone', { state: 'pending' }), 2);
    assert.equal((await q.stats()).timers, timers - 2, 'their run timers left the wheel');
    // The id is free: a new task takes it, with a timer of its own that the purge must not have touched.
    await q.schedule({ id: 'p1', topic: 'gone', delayMs: 5_000 });
    clock.advance(3_000);
    await flush();
    assert.deepEqual((await q.reserve('gone', { max: 10 })).map((d) => d.id), [], 'nothing purged is delivered');
    assert.deepEqual((await q.reserve('kept', { max: 10 })).map((d) => d.id), ['k1']);
    clock.advance(2_000);
    await flush();
    assert.deepEqual((await q.reserve('gone', { max: 10 })).map((d) => d.id), ['p1'], 'the new task fires at its own time');
    assert.equal((await q.stats()).topics['gone']?.pending ?? 0, 0);
  } finally {
    await q.close();
  }
});

test('purge pending of due tasks waiting in the ready queue (three steps): they have left the ready counts when the purge returns; a freed id scheduled again is ready once', async () => {
  const { q, clock } = await openManual();
  try {
    await q.topics.pause('gone');
    const n = PURGE_STEP * 2 + 100;
    await q.scheduleMany(Array.from({ length: n }, (_, i) => ({ id: `g${i}`, topic: 'gone', delayMs: 1_000 })));
    await q.schedule({ id: 'k1', topic: 'kept', delayMs: 1_000 });
    await q.topics.pause('kept');
    clock.advance(1_500);
    await flush();
    let stats = await q.stats();
    assert.deepEqual([stats.ready['gone'], stats.oldestReady['gone'], stats.ready['kept']], [n, clock.now() - 500, 1]);
    assert.equal(await q.topics.purge('gone', { state: 'pending' }), n);
    stats = await q.stats();
    // Issue 49: the ready gauges kept counting them (and their age climbing) until a reserve on the topic.
    assert.deepEqual([stats.ready['gone'], stats.oldestReady['gone'], stats.ready['kept']], [undefined, undefined, 1]);
    // An id the purge freed, scheduled again: its own ready item is not the purged one's.
    await q.schedule({ id: 'g0', topic: 'gone', delayMs: 1_000 });
    clock.advance(1_000);
    await flush();
    assert.equal((await q.stats()).ready['gone'], 1);
    await q.topics.resume('gone');
    assert.deepEqual((await q.reserve('gone', { max: 10 })).map((d) => d.id), ['g0']);
    assert.equal((await q.stats()).ready['gone'], undefined);
  } finally {
    await q.close();
  }
});

test('a purge goes in bounded steps with turns between them: a reserve on another topic is answered meanwhile', async () => {
  const { q } = await openManual();
  try {
    const n = PURGE_STEP * 6;
    await q.scheduleMany(Array.from({ length: n }, (_, i) => ({ id: `t${i}`, topic: 'big', delayMs: 60_000 })));
    await q.schedule({ id: 'now', topic: 'other' });
    await flush();
    const events: string[] = [];
    const purging = q.topics.purge('big', { state: 'pending' }).then((count) => events.push(`purged ${count}`));
    const reserving = q.reserve('other').then((got) => events.push(`reserved ${got.map((d) => d.id).join()}`));
    await Promise.all([purging, reserving]);
    assert.deepEqual(events, ['reserved now', `purged ${n}`]);
    assert.equal((await q.stats()).topics['big'], undefined);
  } finally {
    await q.close();
  }
});

test('purge dead and completed (with cancelled) on SQLite; reserved tasks stay; bad input is refused with a code', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-topics-'));
  // The SQLite store commits on its clock: the system one here.
  const q = await DelayQueue.open({ store: `sqlite:${join(dir, 'p.db')}` });
  try {
    await q.scheduleMany(['d1', 'd2', 'c1', 'r1', 'x1'].map((id) => ({ id, topic: 't', maxAttempts: 1 })));
    assert.equal(await q.cancel('x1'), true);
    const got = await q.reserve('t', { max: 4 });
    assert.equal(got.length, 4);
    for (const d of got) {
      if (d.id.startsWith('d')) await q.nack(d.id, d.receipt);
      if (d.id === 'c1') await q.ack(d.id, d.receipt);
    }
    assert.equal(await q.topics.purge('t', { state: 'dead' }), 2);
    assert.equal(await q.topics.purge('t', { state: 'completed' }), 2);
    assert.equal(await q.topics.purge('t', { state: 'pending' }), 0);
    assert.deepEqual((await q.stats()).topics['t'], { reserved: 1 });
    assert.equal((await q.get('r1'))?.state, 'reserved');
    const refused = async (topic: unknown, state: unknown, code: string): Promise<void> => {
      await assert.rejects(q.topics.purge(topic as string, { state: state as TopicPurgeState }), (e) => isDelayQError(e, code as 'INVALID_ARGUMENT'), `${String(topic)} ${String(state)}`);
    };
    await refused('t', 'reserved', 'INVALID_ARGUMENT');
    await refused('t', undefined, 'INVALID_ARGUMENT');
    await refused('t', 'cancelled', 'INVALID_ARGUMENT');
    await refused('', 'dead', 'INVALID_TOPIC');
    await refused('x'.repeat(201), 'dead', 'INVALID_TOPIC');
    await refused('a/b', 'dead', 'INVALID_TOPIC');
    await assert.rejects(q.topics.purge('t', undefined as unknown as { state: TopicPurgeState }), (e) => isDelayQError(e, 'INVALID_ARGUMENT'));
  } finally {
    await q.close();
    rmSync(dir, { recursive: true, force: true });
  }
  await assert.rejects(q.topics.purge('t', { state: 'dead' }), (e) => isDelayQError(e, 'QUEUE_CLOSED'));
});
