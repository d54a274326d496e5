/** The lease keeper's fair share of shards (issue 50: three processes on 16 shards hold 5 or 6 each). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fairShare } from '../../src/coordination/lease-keeper.js';

describe('fairShare', () => {
  it('gives three processes on 16 shards 6, 5 and 5 (ceil(16 / 3) for each allowed 6, 6 and 4)', () => {
    assert.deepEqual([0, 1, 2].map((rank) => fairShare(16, { live: 3, rank })), [6, 5, 5]);
  });

  it('adds up to the shards exactly, each share floor(shards / live) or one more', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 256 }), fc.integer({ min: 1, max: 64 }), (shards, live) => {
        const shares = Array.from({ length: live }, (_, rank) => fairShare(shards, { live, rank }));
        assert.equal(shares.reduce((a, b) => a + b, 0), shards);
        for (const share of shares) assert.ok(share === Math.floor(shards / live) || share === Math.floor(shards / live) + 1);
      }),
    );
  });
});
