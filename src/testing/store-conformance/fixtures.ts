/**
 * The records the store suite builds its cases from, at fixed times (T0 is 2030-01-01):
 * a store outside this repo may use them in its own tests too.
 */
import assert from 'node:assert/strict';
import type { TaskStore } from '../../core/ports/index.js';
import type { PushSubscription } from '../../core/push.js';
import type { RecurringScheduleRecord } from '../../core/schedule/model.js';
import { DEFAULT_BACKOFF } from '../../core/task/backoff.js';
import type { NewTaskRecord, TimerRef } from '../../core/task/model.js';

export const T0 = Date.UTC(2030, 0, 1);

export function task(id: string, overrides: Partial<NewTaskRecord> = {}): NewTaskRecord {
  return {
    id,
    topic: 'orders',
    payload: JSON.stringify({ id, n: 1 }),
    runAt: T0 + 1_000,
    maxAttempts: 3,
    ttrMs: 5_000,
    backoff: { ...DEFAULT_BACKOFF, jitter: 0 },
    ...overrides,
  };
}

/** A push subscription of `topic` with every field set (secrets are `whsec_` + base64 of 32 bytes). */
export function pushSubscription(topic: string, overrides: Partial<PushSubscription> = {}): PushSubscription {
  return {
    topic,
    url: 'https://hooks.example.com/delayq',
    secrets: [{ secret: `whsec_${Buffer.alloc(32, 1).toString('base64')}`, expiresAt: null }],
    timeoutMs: 10_000,
    concurrency: 16,
    headers: { 'x-tenant': 'acme' },
    createdAt: T0,
    updatedAt: T0,
    ...overrides,
  };
}

/** A recurring schedule `id` with every field set. */
export function scheduleRecord(id: string, overrides: Partial<RecurringScheduleRecord> = {}): RecurringScheduleRecord {
  return {
    id, topic: 'reports', payload: '{"kind":"daily"}', cron: '30 2 * * *', tz: 'Europe/Berlin', everyMs: null,
    startAt: T0, endAt: null, limit: 10, misfire: 'once', ttrMs: 5_000, maxAttempts: 3,
    backoff: { baseMs: 100, factor: 2, maxMs: 1_000, jitter: 0.5 },
    paused: false, nextAt: T0 + 60_000, lastAt: null, count: 0, rev: 1, createdAt: T0, updatedAt: T0, url: null, priority: 0,
    ...overrides,
  };
}

export async function loadAll(store: TaskStore, until: number, pageSize = 1_000): Promise<TimerRef[]> {
  const out: TimerRef[] = [];
  let after: { dueAt: number; seq: number } | null = null;
  for (;;) {
    const page = await store.tasks.loadDue(until, after, pageSize);
    out.push(...page);
    if (page.length < pageSize) return out;
    const last = page[page.length - 1]!;
    after = { dueAt: last.dueAt, seq: last.seq };
  }
}

/** `refs` hold `count` distinct tasks, ordered by (dueAt, seq). */
export function assertEachOnceInOrder(refs: readonly TimerRef[], count: number): void {
  assert.equal(refs.length, count);
  assert.equal(new Set(refs.map((r) => r.id)).size, count);
  for (let i = 1; i < refs.length; i++) {
    const a = refs[i - 1]!;
    const b = refs[i]!;
    assert.ok(a.dueAt < b.dueAt || (a.dueAt === b.dueAt && a.seq < b.seq), 'ordered by (dueAt, seq)');
  }
}
