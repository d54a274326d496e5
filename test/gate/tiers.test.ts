import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { classify, findTests, NeedsReader, TIERS, type Need } from '../../scripts/test-tiers.js';

const FIXTURES = 'test/gate/fixtures/needs';
const needsOf = (name: string): Need[] => [...new NeedsReader().needsOf(`${FIXTURES}/${name}.ts`)].sort();

describe('test tiers: what a file needs, read from its imports', () => {
  it('a file that imports only code and types needs nothing: the fast tier', () => {
    assert.deepEqual(needsOf('pure'), []);
    assert.equal(TIERS.fast.select(new Set(needsOf('pure'))), true);
  });

  it('node:child_process, reached through another file, is a need for processes', () => {
    assert.deepEqual(needsOf('spawns'), ['processes']);
  });

  it("a helper's test-needs line counts for the files that import it", () => {
    assert.deepEqual(needsOf('via-helper'), ['processes', 'redis']);
    assert.equal(TIERS.redis.select(new Set(needsOf('via-helper'))), true);
    assert.deepEqual(needsOf('marked'), ['pgbouncer']);
  });

  it("a test's import() of a driver counts", () => {
    assert.deepEqual(needsOf('dynamic'), ['postgres']);
    assert.equal(TIERS.postgres.select(new Set(needsOf('dynamic'))), true);
  });

  it('files that import each other have the needs of both', () => {
    assert.deepEqual(needsOf('cycle-a'), ['processes']);
    assert.deepEqual(needsOf('cycle-b'), ['processes']);
  });

  it('an unknown need is an error, not nothing', () => {
    assert.throws(() => needsOf('unknown-need'), /unknown need 'mysql'/);
  });

  it('the tree: the core, the memory store and the pure units are fast; each server has its tier', () => {
    const tiers = classify(findTests('test'));
    const tierOf = (file: string): ReadonlySet<Need> | undefined => tiers.find((t) => t.file === file)?.needs;
    for (const { file, needs } of tiers) if (file.startsWith('test/core/')) assert.deepEqual([...needs], [], file);
    assert.deepEqual([...(tierOf('test/stores/memory/memory-store.test.ts') ?? ['missing'])], []);
    assert.deepEqual([...(tierOf('test/stores/redis/units.test.ts') ?? ['missing'])], []);
    assert.equal(TIERS.redis.select(tierOf('test/stores/redis/store.test.ts') ?? new Set()), true);
    assert.equal(TIERS.postgres.select(tierOf('test/stores/postgres/restart.test.ts') ?? new Set()), true);
    assert.equal(TIERS.browser.select(tierOf('test/ui/dashboard.test.ts') ?? new Set()), true);
  });
});
