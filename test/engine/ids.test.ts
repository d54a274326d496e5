import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createIdGenerator } from '../../src/engine/ids.js';

const ID_PATTERN = /^[A-Za-z0-9._:-]{1,256}$/;

describe('generated task ids', () => {
  it('are unique, short and valid task ids across many ids in one millisecond', () => {
    const next = createIdGenerator(() => 1_790_000_000_000);
    const seen = new Set<string>();
    for (let i = 0; i < 100_000; i++) {
      const id = next();
      assert.match(id, ID_PATTERN);
      assert.ok(id.length <= 19, `${id} is ${id.length} characters`);
      seen.add(id);
    }
    assert.equal(seen.size, 100_000);
  });

  it('sort by creation time across milliseconds', () => {
    let now = 1_790_000_000_000;
    const next = createIdGenerator(() => now);
    const ids: string[] = [];
    for (let i = 0; i < 1_000; i++) {
      ids.push(next());
      now += 997;
    }
    const byCodeUnit = [...ids].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    // Only the time prefix is ordered; compare it, since the counter part varies in width.
    assert.deepEqual(
      byCodeUnit.map((id) => id.slice(0, 8)),
      ids.map((id) => id.slice(0, 8)),
    );
  });

  it('differ between two generators at the same instant', () => {
    const a = createIdGenerator(() => 5)();
    const b = createIdGenerator(() => 5)();
    assert.notEqual(a, b);
  });
});
