/** The lease keeper's fair share of shards (issue 50: three processes on 16 shards hold 5 or 6 each). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { fairShare } from '../../src/coordination/lease-keeper.js';

const shares = (shards: number, live: number): number[] => Array.from({ length: live }, (_, rank) => fairShare(shards, { live, rank }));

describe('fairShare', () => {
  it('gives three processes on 16 shards 6, 5 and 5, the one over to the first to join (ceil(16 / 3) for each allowed 6, 6 and 4)', () => {
    assert.deepEqual(shares(16, 3), [6, 5, 5]);
  });

  it('leaves one shard with the first process to join, whatever joins after it', () => {
    for (let live = 1; live <= 5; live++) assert.deepEqual(shares(1, live), [1, ...Array<number>(live - 1).fill(0)]);
  });

  it('adds up to the shards exactly, each share floor(shards / live) or one more, the larger ones first', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 256 }), fc.integer({ min: 1, max: 64 }), (shards, live) => {
        const all = shares(shards, live);
        assert.equal(all.reduce((a, b) => a + b, 0), shards);
        for (const share of all) assert.ok(share === Math.floor(shards / live) || share === Math.floor(shards / live) + 1);
        assert.deepEqual(all, [...all].sort((a, b) => b - a));
      }),
    );
  });

  it('a newcomer (ranked last) never raises the share of a process that was there: it only takes what they give up', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 256 }), fc.integer({ min: 1, max: 64 }), (shards, live) => {
        const before = shares(shards, live);
        const after = shares(shards, live + 1);
        before.forEach((share, rank) => assert.ok(after[rank]! <= share, `rank ${rank}: ${share} -> ${after[rank]}`));
      }),
    );
  });
});
