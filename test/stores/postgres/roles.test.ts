/**
 * Least privilege on the machine's PostgreSQL, with roles of the test's own (never superuser,
 * dropped after): a schema an administrator created for a role opens without CREATE on the
 * database (issue 47: CREATE SCHEMA IF NOT EXISTS was refused "permission denied for
 * database"); the two roles of docs/postgres.md ("Roles"), set up with exactly its SQL,
 * migrated by `delayq migrate` as the owner and used by a runtime role that does no DDL; and
 * `migrate=never`, `--status` and `--print`.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import { DelayQueue } from '../../../src/index.js';
import { openPostgresStore } from '../../../src/stores/postgres/index.js';
import { SCHEMA_VERSION } from '../../../src/stores/postgres/schema.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { dropSchema, freshSchema, roleNames, storeUrl, tempRoles, urlAs, withClient } from '../../helpers/postgres.js';
import { runCliProcess, type CliResult } from '../../helpers/service-process.js';

/** The ```sql blocks of docs/postgres.md's "Roles" section, for `owner`, `app` and `schema`. */
function documentedRoleSql(owner: string, app: string, schema: string): string[] {
  const doc = readFileSync(new URL('../../../docs/postgres.md', import.meta.url), 'utf8');
  const section = doc.slice(doc.indexOf('\n## Roles\n'), doc.indexOf('\n## ', doc.indexOf('\n## Roles\n') + 1));
  const blocks = [...section.matchAll(/```sql\n([\s\S]*?)```/g)].map((m) => m[1]!);
  assert.equal(blocks.length, 2, 'the Roles section has its two SQL blocks');
  return blocks.map((block) => block.replaceAll('delayq_owner', owner).replaceAll('delayq_app', app).replace(/\bdelayq\b/g, schema));
}

const statements = (block: string): string[] =>
  block
    .split('\n')
    .filter((line) => !line.startsWith('--'))
    .join('\n')
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');

const migrateCli = (...args: string[]): Promise<CliResult> => runCliProcess(['migrate', ...args]);

describe('postgres roles', () => {
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const cleanup of cleanups.reverse()) await cleanup();
  });

  it('opens a schema an administrator created for its role, which has no CREATE on the database (issue 47)', async () => {
    const roles = await tempRoles('dq_app');
    const [app] = roles.names as [string];
    const schema = freshSchema('q');
    cleanups.push(roles.drop, () => dropSchema(schema));
    // The reproduction: CREATE ROLE app LOGIN; CREATE SCHEMA q AUTHORIZATION app;
    await withClient((c) => c.query(`CREATE SCHEMA "${schema}" AUTHORIZATION "${app}"`));
    const canCreate = await withClient((c) => c.query<{ ok: boolean }>(`SELECT has_database_privilege($1, current_database(), 'CREATE') AS ok`, [app]));
    assert.equal(canCreate.rows[0]?.ok, false, 'the role may not create schemas');
    const queue = await DelayQueue.open({ store: urlAs(app, { schema }) });
    try {
      await queue.schedule({ id: 'a', topic: 'orders', payload: { n: 1 } });
      const [task] = await queue.reserve('orders', { max: 1, waitMs: 5_000 });
      assert.equal(task?.id, 'a');
      await queue.ack(task.id, task.receipt);
    } finally {
      await queue.close();
    }
    const owner = await withClient((c) => c.query<{ owner: string }>(`SELECT tableowner AS owner FROM pg_tables WHERE schemaname = $1 AND tablename = 'tasks'`, [schema]));
    assert.equal(owner.rows[0]?.owner, app, 'the role migrated its schema on open');
  });

  it("two roles as docs/postgres.md sets them up: the owner migrates with `delayq migrate`, the runtime role works with migrate=never and does no DDL", async () => {
    // The documented SQL creates them.
    const roles = roleNames('dq_owner', 'dq_app');
    const [owner, app] = roles.names as [string, string];
    const schema = freshSchema('two');
    cleanups.push(roles.drop, () => dropSchema(schema));
    const [setup] = documentedRoleSql(owner, app, schema);
    await withClient(async (c) => {
      for (const sql of statements(setup!)) await c.query(sql);
    });
    const ownerUrl = urlAs(owner, { schema });
    const appUrl = urlAs(app, { schema, migrate: 'never' });

    // Before the migration the runtime role refuses to open, and changes nothing.
    await assert.rejects(() => DelayQueue.open({ store: appUrl }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED') && /version 0/.test(e.message) && /delayq migrate/.test(e.message));
    // Even with migrate=auto: it may not create tables in the owner's schema.
    await assert.rejects(() => DelayQueue.open({ store: urlAs(app, { schema }) }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED') && /may not change the schema/.test(e.message));

    const status = await migrateCli('--store', ownerUrl, '--status', '--json');
    assert.equal(status.code, 0, status.stderr);
    const report = JSON.parse(status.stdout) as { pending: string[] };
    assert.deepEqual(report, { schema, exists: true, version: 0, latest: SCHEMA_VERSION, applied: [], pending: report.pending });
    assert.equal(report.pending.length, SCHEMA_VERSION);
    assert.equal(report.pending[0], '0001_initial');
    const applied = await migrateCli('--store', ownerUrl);
    assert.equal(applied.code, 0, applied.stderr);
    assert.match(applied.stdout, new RegExp(`migrated from version 0 to ${SCHEMA_VERSION}`));
    const again = await migrateCli('--store', ownerUrl);
    assert.match(again.stdout, /nothing to apply/);

    // The runtime role: no CREATE anywhere, and yet every kind of write works.
    const privileges = await withClient((c) =>
      c.query<{ db: boolean; schema: boolean }>(`SELECT has_database_privilege($1, current_database(), 'CREATE') AS db, has_schema_privilege($1, $2, 'CREATE') AS schema`, [app, schema]),
    );
    assert.deepEqual(privileges.rows[0], { db: false, schema: false });
    const queue = await DelayQueue.open({ store: appUrl });
    try {
      await queue.schedule({ id: 'x', topic: 'mail', payload: 1 });
      await queue.schedule({ id: 'later', topic: 'mail', delayMs: 3_600_000 });
      assert.equal(await queue.reschedule('later', { delayMs: 7_200_000 }), true);
      assert.equal(await queue.cancel('later'), true);
      await queue.topics.pause('other');
      await queue.topics.setLimits('mail', { concurrency: 5 });
      const [first] = await queue.reserve('mail', { max: 1, waitMs: 5_000 });
      assert.equal((await queue.nack(first!.id, first!.receipt, { delayMs: 0 })).state, 'pending');
      const [second] = await queue.reserve('mail', { max: 1, waitMs: 5_000 });
      await queue.ack(second!.id, second!.receipt);
      assert.equal((await queue.get('x'))?.state, 'completed');
      await queue.schedules.upsert('nightly', { topic: 'backup', cron: '30 2 * * *' });
      assert.equal((await queue.stats()).counts.completed, 1);
    } finally {
      await queue.close();
    }
    const tables = await withClient((c) => c.query<{ n: number }>(`SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND pg_get_userbyid(c.relowner) <> $2`, [schema, owner]));
    assert.equal(tables.rows[0]?.n, 0, 'everything in the schema is the owner\'s');
  });

  it('migrate=never refuses a schema that is behind, missing or ahead with SCHEMA_OUTDATED, and writes nothing', async () => {
    const schema = freshSchema('never');
    cleanups.push(() => dropSchema(schema));
    const never = `${storeUrl(schema)}&migrate=never`;
    await assert.rejects(() => openPostgresStore(never, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED'));
    const exists = await withClient((c) => c.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]));
    assert.equal(exists.rowCount, 0, 'no schema was created');
    await (await openPostgresStore(storeUrl(schema), { clock: storeSystemClock })).close();
    await (await openPostgresStore(never, { clock: storeSystemClock })).close();
    await withClient((c) => c.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION - 1)]));
    await assert.rejects(() => openPostgresStore(never, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED') && /migrate=never/.test(e.message));
    await assert.rejects(() => openPostgresStore(storeUrl(schema), { clock: storeSystemClock, migrate: 'never' }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED'));
    await assert.rejects(() => openPostgresStore(never, { clock: storeSystemClock, migrate: 'auto' }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await withClient((c) => c.query(`UPDATE "${schema}".meta SET value = $1 WHERE key = 'schema_version'`, [String(SCHEMA_VERSION + 1)]));
    for (const url of [never, storeUrl(schema)])
      await assert.rejects(() => openPostgresStore(url, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'SCHEMA_OUTDATED') && /newer delayq/.test(e.message), url);
    const ahead = await migrateCli('--store', storeUrl(schema));
    assert.equal(ahead.code, 1);
    assert.match(ahead.stderr, /SCHEMA_OUTDATED/);
    assert.equal((await withClient((c) => c.query<{ value: string }>(`SELECT value FROM "${schema}".meta WHERE key = 'schema_version'`))).rows[0]?.value, String(SCHEMA_VERSION + 1));
    for (const bad of ['maybe', ''])
      await assert.rejects(() => openPostgresStore(`${storeUrl(schema)}&migrate=${bad}`, { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'));
  });

  it('`delayq migrate --print` prints one transaction that, run by psql, migrates the schema as `delayq migrate` does, and changes nothing itself', async () => {
    const schema = freshSchema('print');
    cleanups.push(() => dropSchema(schema));
    const printed = await migrateCli('--store', storeUrl(schema), '--print');
    assert.equal(printed.code, 0, printed.stderr);
    assert.match(printed.stdout, /^-- delayq: schema ".*" from version 0 to \d+/);
    assert.match(printed.stdout, /\nBEGIN;\n/);
    assert.match(printed.stdout, /\nCOMMIT;\n$/);
    assert.equal((await withClient((c) => c.query(`SELECT 1 FROM pg_namespace WHERE nspname = $1`, [schema]))).rowCount, 0, '--print changed nothing');
    await withClient((c) => c.query(printed.stdout));
    const status = JSON.parse((await migrateCli('--store', storeUrl(schema), '--status', '--json')).stdout) as { version: number; pending: string[] };
    assert.deepEqual([status.version, status.pending], [SCHEMA_VERSION, []]);
    const store = await openPostgresStore(`${storeUrl(schema)}&migrate=never`, { clock: storeSystemClock });
    await store.close();
    assert.match((await migrateCli('--store', storeUrl(schema), '--print')).stdout, /nothing to apply/);
    const usage = await migrateCli();
    assert.equal(usage.code, 2);
    const sqlite = await migrateCli('--store', 'sqlite:./x.db');
    assert.equal(sqlite.code, 1);
    assert.match(sqlite.stderr, /INVALID_STORE_URL: .*only a PostgreSQL schema/);
  });
});
