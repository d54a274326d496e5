import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { IdMap } from '../../src/engine/id-map.js';

interface Value {
  readonly n: number;
  live: boolean;
}

type Op = { kind: 'set'; id: string } | { kind: 'get'; id: string } | { kind: 'delete'; id: string } | { kind: 'die'; id: string };

// Ids that collide in their last and middle characters as well as ones that do not.
const id = fc.oneof(fc.string({ maxLength: 3 }), fc.stringMatching(/^[A-Za-z0-9._:-]{1,40}$/), fc.constantFrom('', 'a', 'order-1', 'order-2', 'x'.repeat(256)));
const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ kind: fc.constant('set' as const), id }),
  fc.record({ kind: fc.constant('get' as const), id }),
  fc.record({ kind: fc.constant('delete' as const), id }),
  fc.record({ kind: fc.constant('die' as const), id }),
);

describe('IdMap', () => {
  it('answers as a Map of the live values on random set / get / delete / die sequences', () => {
    fc.assert(
      fc.property(fc.array(op, { maxLength: 400 }), (ops) => {
        const map = new IdMap<Value>((v) => v.live);
        const model = new Map<string, Value>();
        let n = 0;
        for (const o of ops) {
          if (o.kind === 'set') {
            const value = { n: n++, live: true };
            map.set(o.id, value);
            model.set(o.id, value);
          } else if (o.kind === 'get') {
            assert.equal(map.get(o.id), model.get(o.id));
          } else if (o.kind === 'delete') {
            map.delete(o.id);
            model.delete(o.id);
          } else {
            // What the timer driver does when a timer fires: the value dies, then is released.
            const value = model.get(o.id);
            if (value === undefined) continue;
            value.live = false;
            model.delete(o.id);
            map.released(o.id);
          }
          assert.ok(map.size >= model.size, 'every live value is held');
        }
        for (const [key, value] of model) assert.equal(map.get(key), value);
      }),
      { numRuns: 300 },
    );
  });

  it('lets go of released values: a drained map holds a few hundred per shard at most', () => {
    const map = new IdMap<Value>((v) => v.live);
    const values: [string, Value][] = [];
    for (let i = 0; i < 200_000; i++) values.push([`0Kx3${i.toString(36).padStart(8, '0')}`, { n: i, live: true }]);
    for (const [key, value] of values) map.set(key, value);
    assert.equal(map.size, 200_000);
    for (const [key, value] of values) {
      value.live = false;
      map.released(key);
    }
    assert.ok(map.size <= 64 * 256, `held after the drain: ${map.size}`);
    for (const [key] of values.slice(0, 1_000)) assert.equal(map.get(key), undefined);
  });

  it('spreads generated-style ids over its shards', () => {
    const map = new IdMap<number>();
    for (let i = 0; i < 64_000; i++) map.set(`0Kx3${i.toString(36).padStart(8, '0')}`, i);
    const sizes = (map as unknown as { shards: Map<string, number>[] }).shards.map((s) => s.size);
    assert.equal(map.size, 64_000);
    assert.ok(Math.max(...sizes) < 4 * (64_000 / 64), `no shard holds four times its share: ${Math.max(...sizes)}`);
  });
});
