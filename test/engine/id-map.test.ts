import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { IdMap } from '../../src/engine/timers/id-map.js';
import { createIdGenerator } from '../../src/engine/tasks/ids.js';

type Op = { kind: 'set'; id: string; value: number } | { kind: 'get'; id: string } | { kind: 'delete'; id: string };

// Ids that collide in their last and middle characters as well as ones that do not.
const id = fc.oneof(fc.string({ maxLength: 3 }), fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/), fc.constantFrom('', 'a', 'order-1', 'order-2', 'x'.repeat(256)));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), id, value: fc.integer() }),
  fc.record({ kind: fc.constant('get' as const), id }),
  fc.record({ kind: fc.constant('delete' as const), id }),
);

describe('IdMap', () => {
  it('behaves as one Map on random set / get / delete sequences', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const map = new IdMap<number>();
        const model = new Map<string, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            map.set(o.id, o.value);
            model.set(o.id, o.value);
          } else if (o.kind === 'get') {
            assert.equal(map.get(o.id), model.get(o.id));
          } else {
            assert.equal(map.delete(o.id), model.delete(o.id));
          }
          assert.equal(map.size, model.size);
        }
        for (const [key, value] of model) assert.equal(map.get(key), value);
      }),
      { numRuns: 300 },
    );
  });

  it('spreads ids over shards whose sizes cover an octave, so they rehash at different moments', () => {
    const next = createIdGenerator(() => 1_764_000_000_000);
    for (const make of [next, (i: number) => `0Kx3${i.toString(36).padStart(8, '0')}`, (i: number) => `order-${i}`]) {
      const map = new IdMap<number>();
      const n = 256_000;
      for (let i = 0; i < n; i++) map.set(make(i), i);
      const sizes = (map as unknown as { shards: Map<string, number>[] }).shards.map((s) => s.size);
      assert.equal(map.size, n);
      // Shard k's share of the ids is 2^(k/256) * (2^(1/256) - 1): the shares sum to 1.
      const unit = n * (2 ** (1 / 256) - 1);
      sizes.forEach((size, k) => {
        const expected = unit * 2 ** (k / 256);
        assert.ok(size > expected / 2 && size < expected * 2, `shard ${k}: ${size} vs ${expected.toFixed(0)} expected`);
      });
      const low = sizes.slice(0, 32).reduce((a, b) => a + b, 0);
      const high = sizes.slice(-32).reduce((a, b) => a + b, 0);
      assert.ok(high > 1.6 * low, `the largest shards hold well over the smallest: ${high} vs ${low}`);
    }
  });
});
