// Runs of parked seqs (seq-runs.ts): whatever goes in comes back, in order, and the usual
// run (growing by small steps) takes one or two bytes a seq.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { decodeSeqs, encodeSeqs } from '../../../src/stores/sqlite/seq-runs.js';

describe('sqlite store: packed runs of seqs', () => {
  it('decodes what it encoded, for any seqs below 2^51 in any order', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 2 ** 51 }), { maxLength: 300 }), (seqs) => {
        assert.deepEqual(decodeSeqs(encodeSeqs(seqs)), seqs);
      }),
      { numRuns: 500 },
    );
  });

  it('packs a growing run of nearby seqs into about a byte each', () => {
    const seqs = Array.from({ length: 256 }, (_, i) => 9_000_000_000 + i * 40);
    const packed = encodeSeqs(seqs);
    assert.ok(packed.length <= 5 + 255 * 1, `${packed.length} bytes`);
    assert.deepEqual(decodeSeqs(packed), seqs);
  });

  it('refuses a truncated run instead of inventing a seq', () => {
    const packed = encodeSeqs([5, 1_000_000]);
    assert.throws(() => decodeSeqs(packed.subarray(0, packed.length - 1)), /truncated/);
  });
});
