/**
 * Pages of a schedule listing (src/core/schedule/page.ts): following `next` from the first
 * page visits every schedule once, in id order; no page is longer than its limit, and a page
 * ends once its payloads pass the budget, yet is never empty while schedules remain.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDelayQError } from '../../../src/core/errors.js';
import { DEFAULT_SCHEDULE_PAGE, MAX_SCHEDULE_PAGE } from '../../../src/core/schedule/model.js';
import { schedulePage, type SchedulePage } from '../../../src/core/schedule/page.js';
import { validateSchedulePage } from '../../../src/core/schedule/validate.js';

const item = (id: string, payload = 'null'): { id: string; payload: string } => ({ id, payload });
const ids = (items: readonly { id: string }[]): string[] => items.map((i) => i.id);

describe('schedulePage', () => {
  const abcd = ['a', 'b', 'c', 'd'].map((id) => item(id));

  it('pages by id after the cursor; next is null on the last page', () => {
    const first = schedulePage(abcd, { afterId: null, limit: 2 });
    assert.deepEqual([ids(first.items), first.next], [['a', 'b'], 'b']);
    const second = schedulePage(abcd, { afterId: 'b', limit: 2 });
    assert.deepEqual([ids(second.items), second.next], [['c', 'd'], null]);
    assert.deepEqual(schedulePage(abcd, { afterId: 'bb', limit: 9 }), { items: abcd.slice(2), next: null });
    assert.deepEqual(schedulePage(abcd, { afterId: 'd', limit: 9 }), { items: [], next: null });
    assert.deepEqual(schedulePage([], { afterId: null, limit: 9 }), { items: [], next: null });
  });

  it('ends a page after the schedule whose payload passes the budget, never with none', () => {
    const big = ['a', 'b', 'c'].map((id) => item(id, 'x'.repeat(600)));
    const page = schedulePage(big, { afterId: null, limit: 100 }, 1_000);
    assert.deepEqual([ids(page.items), page.next], [['a', 'b'], 'b']);
    const huge = schedulePage([item('a', 'x'.repeat(5_000)), item('b')], { afterId: null, limit: 100 }, 1_000);
    assert.deepEqual([ids(huge.items), huge.next], [['a'], 'a']);
  });

  it('property: following next visits every schedule once, in order, within limit and budget', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.stringMatching(/^[a-z0-9:._-]{1,6}$/), { maxLength: 60 }),
        fc.array(fc.integer({ min: 0, max: 300 }), { minLength: 60, maxLength: 60 }),
        fc.integer({ min: 1, max: 12 }),
        fc.integer({ min: 0, max: 1_000 }),
        (names, sizes, limit, budget) => {
          const sorted = [...names].sort().map((id, i) => item(id, 'x'.repeat(sizes[i]!)));
          const seen: string[] = [];
          let afterId: string | null = null;
          for (let pages = 0; ; pages++) {
            assert.ok(pages <= sorted.length + 1, 'the pages end');
            const page: SchedulePage<{ id: string; payload: string }> = schedulePage(sorted, { afterId, limit }, budget);
            assert.ok(page.items.length <= limit);
            const spent = page.items.slice(0, -1).reduce((n, s) => n + s.payload.length, 0);
            assert.ok(spent <= budget, 'only the last schedule of a page may pass the budget');
            seen.push(...ids(page.items));
            if (page.next === null) break;
            assert.ok(page.items.length > 0);
            assert.equal(page.next, page.items.at(-1)!.id);
            afterId = page.next;
          }
          assert.deepEqual(seen, ids(sorted));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('validateSchedulePage', () => {
  it(`defaults to ${DEFAULT_SCHEDULE_PAGE} from the start; limit 1 to ${MAX_SCHEDULE_PAGE} (INVALID_OPTION); after a schedule id (INVALID_ID)`, () => {
    assert.deepEqual(validateSchedulePage({}), { afterId: null, limit: DEFAULT_SCHEDULE_PAGE });
    assert.deepEqual(validateSchedulePage({ afterId: 'nightly', limit: MAX_SCHEDULE_PAGE }), { afterId: 'nightly', limit: MAX_SCHEDULE_PAGE });
    for (const limit of [0, MAX_SCHEDULE_PAGE + 1, 1.5, '10']) assert.throws(() => validateSchedulePage({ limit }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'), String(limit));
    for (const afterId of ['', 'a b', 'x'.repeat(201), 5]) assert.throws(() => validateSchedulePage({ afterId }), (e: unknown) => isDelayQError(e, 'INVALID_ID'), String(afterId));
  });
});
