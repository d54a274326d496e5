/**
 * The planner (misfire policies, lead, limit, endAt, pause) as table cases
 * (initial state -> occurrences created and state after), and definition checks.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import { MAX_CATCH_UP, occurrenceId, type RecurringScheduleRecord } from '../../../src/core/schedule/model.js';
import { planDueAt, planOccurrences } from '../../../src/core/schedule/plan.js';
import { compileRule } from '../../../src/core/schedule/rule.js';
import { validateRecurring } from '../../../src/core/schedule/validate.js';
import { compileCron } from '../../../src/engine/recurring/cron-pattern.js';

function every(ms: number, over: Partial<RecurringScheduleRecord> = {}): RecurringScheduleRecord {
  return {
    id: 's', topic: 't', payload: 'null', cron: null, tz: 'UTC', everyMs: ms, startAt: null, endAt: null, limit: null, misfire: 'once',
    ttrMs: 1000, maxAttempts: 1, backoff: { baseMs: 0, factor: 1, maxMs: 0, jitter: 0 },
    paused: false, nextAt: null, lastAt: null, count: 0, rev: 1, createdAt: 0, updatedAt: 0, url: null, priority: 0, ...over,
  };
}
const opts = { leadMs: 1_000, graceMs: 1_000 };

describe('planOccurrences', () => {
  const cases: Array<[string, Partial<RecurringScheduleRecord>, number, number[], Partial<RecurringScheduleRecord>, number]> = [
    ['first plan: the next occurrences within the lead, and one beyond', { nextAt: 10_000 }, 9_500, [10_000, 11_000], { nextAt: 12_000, lastAt: 11_000, count: 2 }, 0],
    ['ahead already: nothing', { nextAt: 12_000, lastAt: 11_000, count: 2 }, 9_800, [], { nextAt: 12_000, lastAt: 11_000, count: 2 }, 0],
    ['misfire once: the latest missed, then ahead', { nextAt: 10_000, lastAt: 9_000, count: 1 }, 15_500, [14_000, 15_000, 16_000, 17_000], { nextAt: 18_000, lastAt: 17_000, count: 5 }, 4],
    ['misfire skip', { nextAt: 10_000, lastAt: 9_000, misfire: 'skip' }, 15_500, [15_000, 16_000, 17_000], { nextAt: 18_000, lastAt: 17_000 }, 5],
    ['misfire all', { nextAt: 10_000, lastAt: 9_000, misfire: 'all' }, 15_500, [10_000, 11_000, 12_000, 13_000, 14_000, 15_000, 16_000, 17_000], { nextAt: 18_000 }, 0],
    ['late within grace is not a misfire', { nextAt: 10_000, lastAt: 9_000 }, 10_900, [10_000, 11_000, 12_000], { nextAt: 13_000 }, 0],
    ['limit ends the schedule', { nextAt: 10_000, limit: 3, count: 2 }, 9_500, [10_000], { nextAt: null, count: 3 }, 0],
    ['endAt ends the schedule', { nextAt: 10_000, endAt: 11_000 }, 9_500, [10_000], { nextAt: null }, 0],
    ['paused: nothing', { nextAt: 10_000, paused: true }, 15_500, [], { nextAt: 10_000 }, 0],
  ];
  for (const [name, over, now, create, after, skipped] of cases) {
    it(name, () => {
      const rec = every(1_000, over);
      const plan = planOccurrences(rec, compileRule(rec, compileCron), now, opts);
      assert.deepEqual(plan.create, create);
      for (const [k, v] of Object.entries(after)) assert.equal((plan.state as unknown as Record<string, unknown>)[k], v, k);
      assert.equal(plan.skipped, skipped);
    });
  }

  it('misfire all creates at most MAX_CATCH_UP missed occurrences, the latest ones, in order', () => {
    const rec = every(1_000, { nextAt: 0, lastAt: null, misfire: 'all' });
    const plan = planOccurrences(rec, compileRule(rec, compileCron), 5_000_000, opts);
    const missed = plan.create.filter((t) => t < 5_000_000 - 1_000);
    assert.equal(missed.length, MAX_CATCH_UP);
    assert.equal(missed[missed.length - 1], 4_998_000);
    assert.equal(plan.skipped, 4_999 - MAX_CATCH_UP);
  });

  it('a long downtime of a frequent rule is planned in bounded steps', () => {
    const rec = every(1_000, { nextAt: 0, misfire: 'once' });
    const plan = planOccurrences(rec, compileRule(rec, compileCron), 365 * 86_400_000, opts);
    assert.equal(plan.create[0], 365 * 86_400_000 - 2_000);
  });

  it('planDueAt: now when behind, lastAt - lead when ahead, null when ended or paused', () => {
    assert.equal(planDueAt({ paused: false, nextAt: 5, lastAt: null, count: 0 }, 100, 10), 100);
    assert.equal(planDueAt({ paused: false, nextAt: 600, lastAt: 500, count: 1 }, 100, 10), 490);
    assert.equal(planDueAt({ paused: false, nextAt: null, lastAt: 500, count: 1 }, 100, 10), null);
    assert.equal(planDueAt({ paused: true, nextAt: 600, lastAt: 500, count: 1 }, 100, 10), null);
  });

  it('occurrence ids never collide across schedule ids holding ":"', () => {
    assert.notEqual(occurrenceId('a:1', 2), occurrenceId('a', 12));
    assert.equal(occurrenceId('a:1', 2), 'a:1:2');
  });
});

describe('validateRecurring', () => {
  const NOW = Date.UTC(2030, 0, 1);
  const bad: Array<[string, unknown, string]> = [
    ['invalid cron', { topic: 't', cron: '61 * * * *' }, 'minute'],
    ['7 fields', { topic: 't', cron: '* * * * * * *' }, 'parts'],
    ['unknown tz', { topic: 't', cron: '* * * * *', tz: 'Mars/Olympus' }, 'unknown time zone'],
    ['both', { topic: 't', cron: '* * * * *', everyMs: 1000 }, 'not both'],
    ['neither', { topic: 't' }, 'give cron or everyMs'],
    ['everyMs too small', { topic: 't', everyMs: 999 }, 'from 1000'],
    ['endAt before startAt', { topic: 't', everyMs: 1000, startAt: 5000, endAt: 4000 }, 'after startAt'],
    ['bad limit', { topic: 't', everyMs: 1000, limit: 0 }, 'limit'],
    ['bad misfire', { topic: 't', everyMs: 1000, misfire: 'sometimes' }, 'misfire'],
    ['never fires', { topic: 't', cron: '0 0 30 2 *' }, 'no occurrence'],
  ];
  for (const [name, input, reason] of bad) {
    it(`refuses ${name} with INVALID_SCHEDULE and the reason`, () => {
      assert.throws(() => validateRecurring('s', input, compileCron, NOW), (e: unknown) => isDelayQError(e, 'INVALID_SCHEDULE') && e.message.includes(reason));
    });
  }
  it('refuses a schedule id outside the alphabet or too long', () => {
    assert.throws(() => validateRecurring('a b', { topic: 't', everyMs: 1000 }, compileCron, NOW), (e: unknown) => isDelayQError(e, 'INVALID_ID'));
    assert.throws(() => validateRecurring('x'.repeat(201), { topic: 't', everyMs: 1000 }, compileCron, NOW), (e: unknown) => isDelayQError(e, 'INVALID_ID'));
  });
  it('defaults: tz UTC, misfire once, task options from the queue defaults', () => {
    const def = validateRecurring('s', { topic: 't', cron: '0  9 * * MON-FRI ', payload: { a: 1 } }, compileCron, NOW);
    assert.equal(def.cron, '0 9 * * MON-FRI');
    assert.equal(def.tz, 'UTC');
    assert.equal(def.misfire, 'once');
    assert.equal(def.payload, '{"a":1}');
    assert.equal(def.ttrMs, 30_000);
  });
});
