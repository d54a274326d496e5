/**
 * The PostgreSQL store's SQL files (src/stores/postgres/sql/, sql-files.ts): every statement
 * the code names is a file and every file is named; the migrations that shipped say what they
 * said (an existing database ran them, so their effect must never change); the literals the
 * statements read NULL columns with are the store's STORED_DEFAULTS, and the history they keep
 * is HISTORY_LIMIT long.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { HISTORY_LIMIT } from '../../../src/core/task/history.js';
import { STORED_DEFAULTS } from '../../../src/stores/postgres/rows.js';
import { forSchema, loadMigrations, loadStatement, STATEMENT_NAMES } from '../../../src/stores/postgres/sql-files.js';

const SQL_DIR = new URL('../../../src/stores/postgres/sql/', import.meta.url);
const sqlFiles = (under = ''): string[] => readdirSync(new URL(under, SQL_DIR)).filter((f) => f.endsWith('.sql')).map((f) => f.slice(0, -4)).sort();

/** A migration's SQL as the server runs it, without the comment lines of its header. */
const body = (sql: string): string => sql.split('\n').filter((line) => !line.startsWith('--')).join('\n').trim();

/**
 * sha256 (first 16 hex digits) of each shipped migration's body (its SQL without the header's
 * comment lines); 0001-0009 taken from the TypeScript strings they were before they moved to
 * .sql files. Append a line for a new migration; never change one.
 */
const SHIPPED: readonly string[] = [
  '2d8b9196a70023a4',
  'abd99de74b90a3b4',
  'cb8d60bbdb2bdd91',
  'dcf96c359b401009',
  '52841c188eafb528',
  'b5f0c7b117dee0bf',
  '45abccb0fa38ed91',
  '586e2373597658e8',
  '76a47d8a3c68bd63',
  'aad9438d38eec3a0',
  '768a2db1ead3d1eb',
  '6a17c65e06e445a6',
  'c274c4d52ff20f66',
  '6ca4038284d331f9',
  '2d20c80674a1d22d',
  '2cf92ff847ef1c52',
  '3698adcdeba72132',
];

describe('postgres SQL files', () => {
  it('every statement the code names is a file of sql/, and every file there is named', () => {
    assert.deepEqual([...STATEMENT_NAMES].sort(), sqlFiles());
    for (const name of STATEMENT_NAMES) assert.doesNotMatch(loadStatement(name), /^\s*--/m, `${name}: comments and include markers are dropped`);
  });

  it('every include is used, and a statement is one statement (no ; inside it)', () => {
    const used = new Set<string>();
    for (const name of [...STATEMENT_NAMES, ...sqlFiles('includes/').map((i) => `includes/${i}`)])
      for (const [, include] of readFileSync(new URL(`${name}.sql`, SQL_DIR), 'utf8').matchAll(/^-- @include ([a-z0-9-]+)$/gm)) used.add(include!);
    assert.deepEqual([...used].sort(), sqlFiles('includes/'));
    for (const name of STATEMENT_NAMES) assert.doesNotMatch(loadStatement(name), /;/, name);
  });

  it('the migrations are numbered from 1 without a gap, and those that shipped are unchanged', () => {
    const migrations = loadMigrations();
    assert.deepEqual(migrations.map((m) => m.version), migrations.map((_, i) => i + 1));
    assert.ok(migrations.length >= SHIPPED.length);
    for (const [i, hash] of SHIPPED.entries()) assert.equal(createHash('sha256').update(body(migrations[i]!.sql)).digest('hex').slice(0, 16), hash, migrations[i]!.name);
  });

  it('migrations and statements share nothing: a migration includes no statement piece', () => {
    for (const migration of loadMigrations()) assert.doesNotMatch(migration.sql, /@include/, migration.name);
  });

  it("the literals that read a NULL column as its usual value are STORED_DEFAULTS, and the history keeps HISTORY_LIMIT entries", () => {
    const texts = STATEMENT_NAMES.map(loadStatement).join('\n');
    const found = [...texts.matchAll(/coalesce\((?:[a-z]\.)?(attempts|max_attempts|ttr_ms|backoff_base_ms|backoff_factor|backoff_max_ms|backoff_jitter), ([0-9.]+)\)/g)];
    assert.ok(found.length > 10);
    const columns = new Set<string>();
    for (const [text, column, value] of found) {
      assert.equal(Number(value), STORED_DEFAULTS[column as keyof typeof STORED_DEFAULTS], text);
      columns.add(column!);
    }
    assert.deepEqual([...columns].sort(), Object.keys(STORED_DEFAULTS).sort(), 'every defaulted column is read somewhere');
    const limits = [...texts.matchAll(/jsonb_array_length\(t\.history\) >= (\d+)/g)].map((m) => Number(m[1]));
    assert.ok(limits.length > 0);
    for (const limit of limits) assert.equal(limit, HISTORY_LIMIT);
  });

  it('forSchema quotes the schema where S. names an object and leaves the rest', () => {
    assert.equal(forSchema("SELECT x FROM S.tasks t WHERE t.id = 'S' AND pg_notify('delayq:{schema}:timers', 'AS.')", 'q'), `SELECT x FROM "q".tasks t WHERE t.id = 'S' AND pg_notify('delayq:q:timers', 'AS.')`);
  });
});
