import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validateId } from '../../src/core/task/validate.js';
import { createIdGenerator, SORTABLE_ALPHABET } from '../../src/engine/tasks/ids.js';

const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

// Any instant a clock can report, from the epoch (a manual clock's start) to far past today.
const instant = fc.integer({ min: 0, max: 2 ** 47 });

describe('generated task ids', () => {
  it('are built from 64 distinct id-safe characters in ASCII order, none of them a dash', () => {
    assert.equal(new Set(SORTABLE_ALPHABET).size, 64);
    assert.equal([...SORTABLE_ALPHABET].sort(byCodeUnit).join(''), SORTABLE_ALPHABET);
    assert.equal(validateId(SORTABLE_ALPHABET), SORTABLE_ALPHABET);
    assert.ok(!SORTABLE_ALPHABET.includes('-'));
  });

  it('are unique, short and valid task ids across many ids in one millisecond', () => {
    const next = createIdGenerator(() => 1_790_000_000_000);
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = next();
      assert.equal(validateId(id), id);
      assert.ok(id.length <= 19, `${id} is ${id.length} characters`);
      seen.add(id);
    }
    assert.equal(seen.size, 100_000);
  });

  it('never start with a dash, so a shell command takes them as arguments, not options', () => {
    fc.assert(
      fc.property(instant, fc.nat({ max: 5_000 }), (now, skip) => {
        const next = createIdGenerator(() => now);
        for (let i = 0; i < skip; i++) next();
        const id = next();
        assert.ok(!id.startsWith('-'), id);
        assert.equal(validateId(id), id);
      }),
      { numRuns: 300 },
    );
  });

  it('sort by creation time across milliseconds, compared as plain strings', () => {
    fc.assert(
      fc.property(fc.array(instant, { minLength: 2, maxLength: 50 }), (instants) => {
        const times = [...new Set(instants)].sort((a, b) => a - b);
        let now = 0;
        const next = createIdGenerator(() => now);
        const ids = times.map((t) => {
          now = t;
          return next();
        });
        assert.deepEqual([...ids].sort(byCodeUnit), ids);
      }),
      { numRuns: 300 },
    );
  });

  it('differ between two generators at the same instant', () => {
    const a = createIdGenerator(() => 5)();
    const b = createIdGenerator(() => 5)();
    assert.notEqual(a, b);
  });
});
