/**
 * Shards shared between processes on one PostgreSQL schema (issue 50): three stores on 16
 * shards hold 6, 5 and 5, the one first by owner id the one over (lease-keeper.ts fairShare).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import type { PostgresStore } from '../../../src/stores/postgres/postgres-store.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { dropSchema, freshSchema, PG_URL } from '../../helpers/postgres.js';

describe('postgres shard leases', () => {
  const schema = freshSchema('balance');
  after(() => dropSchema(schema));

  it('shares 16 shards between three processes as 6, 5 and 5, every shard held once', async () => {
    const stores: PostgresStore[] = [];
    try {
      for (let i = 0; i < 3; i++) stores.push((await openPostgresStore(`${PG_URL}?schema=${schema}&poolSize=2`, { clock: storeSystemClock })) as PostgresStore);
      const sizes = (): number[] => stores.map((store) => store.shared.leases.size);
      const settled = (): boolean => sizes().reduce((a, b) => a + b, 0) === 16 && sizes().every((n) => n === 5 || n === 6);
      // A tick a second (LEASE_MS / 5): the newcomers' shares are given up and taken within a few.
      const deadline = Date.now() + 20_000;
      while (!settled() && Date.now() < deadline) await sleep(50);
      assert.deepEqual([...sizes()].sort(), [5, 5, 6], `held: ${sizes().join(', ')}`);
      const held = stores.flatMap((store) => store.shared.leases.owned());
      assert.equal(new Set(held).size, 16, 'every shard held once');
      const first = stores.map((store) => store.shared.leases.owner).sort()[0];
      assert.equal(stores.find((store) => store.shared.leases.owner === first)!.shared.leases.size, 6, 'the first by owner id holds the one over');
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
