/**
 * Shards shared between processes on one PostgreSQL schema (issue 50): the heartbeat ranks
 * the processes by when they joined (members.joined_at, migration 0017), and three stores on
 * 16 shards hold 6, 5 and 5, the first to open the one over (lease-keeper.ts fairShare).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import type { PostgresStore } from '../../../src/stores/postgres/postgres-store.js';
import { forSchema, statement } from '../../../src/stores/postgres/sql-files.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { dropSchema, freshSchema, PG_URL, withClient } from '../../helpers/postgres.js';

describe('postgres shard leases', () => {
  const schemas: string[] = [];
  const schemaOfTest = (): string => {
    const schema = freshSchema('balance');
    schemas.push(schema);
    return schema;
  };
  after(async () => {
    for (const schema of schemas) await dropSchema(schema);
  });

  it('ranks the processes by when they joined, ties by owner id, one with no join time first; forgets the run-out ones', async () => {
    const schema = schemaOfTest();
    await (await openPostgresStore(`${PG_URL}?schema=${schema}`, { clock: storeSystemClock })).close();
    await withClient(async (c) => {
      const far = 10_000_000;
      const beat = async (owner: string, now: number): Promise<{ live: number; rank: number }> =>
        (await c.query<{ live: number; rank: number }>(forSchema(statement('heartbeat'), schema), [owner, now, far])).rows[0]!;
      assert.deepEqual(await beat('z', 1_000), { live: 1, rank: 0 });
      assert.deepEqual(await beat('m', 2_000), { live: 2, rank: 1 }, 'a newcomer ranks after z, whose id sorts after its own');
      assert.deepEqual(await beat('a', 2_000), { live: 3, rank: 1 }, 'joined with m: first by id');
      assert.deepEqual(await beat('z', 3_000), { live: 3, rank: 0 }, 'z keeps its join time');
      assert.deepEqual(await beat('m', 3_000), { live: 3, rank: 2 });
      // A process of a delayq before join times writes its heartbeat only: it counts as first.
      await c.query(`INSERT INTO "${schema}".members (owner, expires_at) VALUES ('old', $1)`, [far]);
      assert.deepEqual(await beat('z', 4_000), { live: 4, rank: 1 });
      await c.query(`DELETE FROM "${schema}".members WHERE owner = 'old'`);
      // a's heartbeat runs out: it is forgotten with its join time, and joins anew as the last.
      await c.query(`UPDATE "${schema}".members SET expires_at = 4500 WHERE owner = 'a'`);
      assert.deepEqual(await beat('m', 5_000), { live: 2, rank: 1 });
      assert.deepEqual(await beat('a', 6_000), { live: 3, rank: 2 });
      const joined = await c.query<{ owner: string; joined_at: string }>(`SELECT owner, joined_at FROM "${schema}".members ORDER BY owner`);
      assert.deepEqual(joined.rows.map((r) => [r.owner, Number(r.joined_at)]), [['a', 6_000], ['m', 2_000], ['z', 1_000]]);
    });
  });

  it('shares 16 shards between three processes as 6, 5 and 5, every shard held once, the one over to the first to open', async () => {
    const schema = schemaOfTest();
    const stores: PostgresStore[] = [];
    try {
      for (let i = 0; i < 3; i++) {
        stores.push((await openPostgresStore(`${PG_URL}?schema=${schema}&poolSize=2`, { clock: storeSystemClock })) as PostgresStore);
        await sleep(5); // joined at different milliseconds: the rank is by join time, not by owner id
      }
      const sizes = (): number[] => stores.map((store) => store.coordination.leases.size);
      const settled = (): boolean => sizes().reduce((a, b) => a + b, 0) === 16 && sizes().every((n) => n === 5 || n === 6);
      // A tick a second (LEASE_MS / 5): the newcomers' shares are given up and taken within a few.
      const deadline = Date.now() + 20_000;
      while (!settled() && Date.now() < deadline) await sleep(50);
      assert.deepEqual(sizes(), [6, 5, 5], `held: ${sizes().join(', ')}`);
      const held = stores.flatMap((store) => store.coordination.leases.owned());
      assert.equal(new Set(held).size, 16, 'every shard held once');
    } finally {
      for (const store of stores) await store.close();
    }
  });
});
