// Store options by the options table (issue 50): an option given to a store that does not
// read it is an error (INVALID_OPTION in code, INVALID_STORE_URL in a URL) before anything
// is opened or connected; each store's URL parameters and bounds are the table's.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { STORE_OPTIONS } from '../../src/core/option-table/index.js';
import { isDelayQError } from '../../src/core/errors.js';
import { buildProgram } from '../../src/cli/program.js';
import { openMigrator, openStore } from '../../src/stores/open-store.js';
import { parsePostgresUrl } from '../../src/stores/postgres/url.js';
import { parseRedisUrl } from '../../src/stores/redis/connection.js';
import { resolveOptions } from '../../src/stores/redis/index.js';
import { optionsOf, urlParameters } from '../../src/stores/shared/store-options.js';

const refused = (code: string, message: RegExp) => (error: unknown): boolean => isDelayQError(error, code as 'INVALID_OPTION') && message.test(error.message);

describe('store options by the options table', () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-store-options-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('refuses, before opening anything, an option the store kind does not read', async () => {
    await assert.rejects(openStore('memory', { horizonMs: 60_000 }), refused('INVALID_OPTION', /^horizonMs: read only by sqlite, redis and postgres stores, not by a memory store/));
    const file = join(dir, 'never.db');
    await assert.rejects(openStore(`sqlite:${file}`, { prefix: 'a' }), refused('INVALID_OPTION', /^prefix: read only by redis stores, not by a sqlite store/));
    assert.equal(existsSync(file), false, 'no file created');
    // Port 1: nothing listens there, and nothing is tried (the fast tier's guard fails a connection).
    await assert.rejects(openStore('redis://127.0.0.1:1', { schema: 'jobs' }), refused('INVALID_OPTION', /^schema: read only by postgres stores, not by a redis store/));
    await assert.rejects(openStore('postgres://u@127.0.0.1:1/db', { shards: 4 }), refused('INVALID_OPTION', /^shards: read only by redis stores, not by a postgres store/));
    await assert.rejects(openStore('postgres://u@127.0.0.1:1/db', { synchronous: 'FULL' }), refused('INVALID_OPTION', /^synchronous: read only by sqlite stores/));
    await assert.rejects(openStore('memory', { horizon: 5 } as never), refused('INVALID_OPTION', /^storeOptions\.horizon: unknown store option/));
  });

  it('takes an option the kind reads, and the ports every store is handed', async () => {
    const store = await openStore(`sqlite:${join(dir, 'ok.db')}`, { horizonMs: 5_000, synchronous: 'FULL' });
    await store.close();
    // Left undefined (from JavaScript, or a spread of optional values) is not given.
    await (await openStore('memory', { horizonMs: undefined } as never)).close();
  });

  it('refuses a URL parameter of another kind by name, and an unknown one with the known ones', () => {
    assert.throws(() => parseRedisUrl('redis://h:1?schema=jobs'), refused('INVALID_STORE_URL', /schema: read only by postgres stores, not by a redis store/));
    assert.throws(() => parseRedisUrl('redis+cluster://h:1,h:2?poolSize=2'), refused('INVALID_STORE_URL', /poolSize: read only by postgres stores/));
    assert.throws(() => parsePostgresUrl('postgres://u@h/db?prefix=a'), refused('INVALID_STORE_URL', /prefix: read only by redis stores, not by a postgres store/));
    assert.throws(() => parsePostgresUrl('postgres://u@h/db?shema=a'), refused('INVALID_STORE_URL', /unknown parameter "shema"; known: horizonMs, schema, migrate, listenUrl, poolSize, callTimeoutMs, sslmode/));
  });

  it('gives each kind the parameters and options its rows name', () => {
    assert.deepEqual([...urlParameters('redis').keys()].sort(), ['callTimeoutMs', 'horizonMs', 'prefix', 'shards', 'waitReplicas', 'waitTimeoutMs']);
    assert.deepEqual([...urlParameters('postgres').keys()].sort(), ['callTimeoutMs', 'horizonMs', 'listenUrl', 'migrate', 'poolSize', 'schema']);
    assert.equal(urlParameters('sqlite').size, 0);
    assert.deepEqual(optionsOf('sqlite'), ['horizonMs', 'synchronous']);
    assert.deepEqual(optionsOf('memory'), []);
  });

  it('checks the Redis options against the table\'s bounds, a URL\'s and code\'s alike', () => {
    assert.deepEqual(resolveOptions({}), { prefix: 'delayq', shards: 16, horizonMs: 60_000, wait: { replicas: 0, timeoutMs: 1_000 }, callTimeoutMs: 10_000 });
    assert.throws(() => resolveOptions({ shards: STORE_OPTIONS.shards.max + 1 }), refused('INVALID_OPTION', /^shards: must be an integer from 1 to 256/));
    assert.throws(() => resolveOptions({ horizonMs: 500 }), refused('INVALID_OPTION', /^horizonMs: must be an integer from 1000/));
    assert.throws(() => resolveOptions({ waitReplicas: 17 }), refused('INVALID_OPTION', /^waitReplicas: must be an integer from 0 to 16/));
    assert.throws(() => resolveOptions(parseRedisUrl('redis://h:1?waitTimeoutMs=0').storeOptions), refused('INVALID_OPTION', /^waitTimeoutMs/));
  });

  it('refuses one option given differently in the URL and in code, on Redis as on PostgreSQL, without the password', async () => {
    const agreed = (error: unknown): boolean =>
      isDelayQError(error, 'INVALID_OPTION') && /^prefix: the store URL says a, the options say b$/.test(error.message) && !JSON.stringify(error.details).includes('s3cret');
    await assert.rejects(openStore('redis://u:s3cret@127.0.0.1:1?prefix=a', { prefix: 'b' }), agreed);
    await assert.rejects(
      openStore('postgres://u:s3cret@127.0.0.1:1/db?poolSize=2', { poolSize: 3 }),
      (error: unknown) => isDelayQError(error, 'INVALID_OPTION') && /^poolSize: the store URL says 2, the options say 3$/.test(error.message) && !JSON.stringify(error.details).includes('s3cret'),
    );
  });

  it('delayq migrate takes the schema of --schema / DELAYQ_SCHEMA, as delayq serve does, and refuses one the URL contradicts', async () => {
    await assert.rejects(openMigrator('postgres://u@127.0.0.1:1/db?schema=a', { schema: 'b' }), refused('INVALID_OPTION', /^schema: the store URL says a, the options say b$/));
    const before = process.env['DELAYQ_SCHEMA'];
    process.env['DELAYQ_SCHEMA'] = 'b';
    try {
      const migrate = buildProgram().parseAsync(['node', 'delayq', 'migrate', '--store', 'postgres://u@127.0.0.1:1/db?schema=a']);
      await assert.rejects(migrate, (error: unknown) => (error as { code?: unknown }).code === 'INVALID_OPTION' && /the options say b/.test((error as Error).message));
      const flag = buildProgram().parseAsync(['node', 'delayq', 'migrate', '--store', 'postgres://u@127.0.0.1:1/db?schema=a', '--schema', 'c']);
      await assert.rejects(flag, (error: unknown) => /the options say c/.test((error as Error).message));
    } finally {
      if (before === undefined) delete process.env['DELAYQ_SCHEMA'];
      else process.env['DELAYQ_SCHEMA'] = before;
    }
  });
});
