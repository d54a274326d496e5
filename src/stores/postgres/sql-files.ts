/**
 * The PostgreSQL store's SQL, kept in files a DBA can read (docs/postgres.md, "The SQL"):
 *
 *   sql/<name>.sql              one statement the store sends, its parameters in its header
 *   sql/includes/<name>.sql     a piece several statements share (`-- @include name`)
 *   sql/migrations/NNNN_*.sql   the numbered migrations of a schema, applied in order
 *
 * In all of them `S.` names the schema's objects and `{schema}` is its bare name
 * (`forSchema`). A statement is read once, its includes inlined (shared/includes.ts, as the
 * Redis store's Lua scripts are) and its comment lines dropped; a migration is sent as it is,
 * comments included. The files are read relative to this module, so the same code works from
 * src under tsx and from dist once the build copies src/stores/postgres/sql beside it
 * (kinds.ts `assets`, scripts/copy-assets.ts).
 *
 * Migrations and statements share nothing but the placeholders: a migration includes no
 * statement piece and no statement reads a migration, so a migration that shipped says the
 * same forever whatever the statements become.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { resolveIncludes } from '../shared/includes.js';

const SQL_DIR = new URL('./sql/', import.meta.url);
const MIGRATIONS_DIR = new URL('./sql/migrations/', import.meta.url);

export const STATEMENT_NAMES = [
  // tasks (task-writes.ts, task-changes.ts)
  'schedule',
  'schedule-new',
  'reserve',
  'reserve-due',
  'due-floor',
  'ack',
  'extend',
  'cancel',
  'purge',
  'purge-topic',
  'task-for-update',
  'reschedule',
  'bury',
  'retry',
  'defer',
  'retry-dead',
  'cancel-dead',
  'quarantine',
  'add-counts',
  // reads (inspection.ts)
  'load-due',
  'overdue-reservations',
  'get',
  'list',
  'list-dead',
  'stats',
  'due-histogram',
  // several processes (shared.ts, lease-backend.ts, timer-backend.ts, transactional.ts)
  'notify',
  'heartbeat',
  'lease-acquire',
  'lease-renew',
  'lease-release',
  'leave',
  // topics (topic-pauses.ts, topic-limits.ts)
  'pause',
  'resume',
  'pauses-read',
  'limits-set',
  'limits-clear',
  'limits-read',
  'flow-admit',
  'flow-bind',
  'flow-release',
  'flow-hold',
  'reserved-leases',
  // lifecycle events (event-log.ts)
  'events-append',
  'events-read',
  'events-latest',
  'events-trim',
  // push subscriptions and recurring schedules
  'push-put',
  'push-get',
  'push-list',
  'push-delete',
  'schedules-bump',
  'schedules-put',
  'schedules-put-new',
  'schedules-read',
  'schedules-list',
  'schedules-delete',
  'schedules-swap',
  'schedules-version',
  // opening a schema (schema.ts)
  'migrate-lock',
  'schema-relations',
  'schema-meta',
  'schema-create',
  'schema-mark',
  'schema-shards',
] as const;
export type StatementName = (typeof STATEMENT_NAMES)[number];

/** The SQL for one schema: `S.` names the schema's objects, `{schema}` is its bare name. */
export function forSchema(sql: string, schema: string): string {
  return sql.replace(/\bS\./g, `"${schema}".`).replaceAll('{schema}', schema);
}

const COMMENT_LINE = /^\s*--/;

/** A statement file's text: includes inlined, comment lines dropped (the server needs neither). */
export function loadStatement(name: string): string {
  const raw = readFileSync(new URL(`${name}.sql`, SQL_DIR), 'utf8');
  const source = resolveIncludes(raw, (include) => readFileSync(new URL(`includes/${include}.sql`, SQL_DIR), 'utf8'), false);
  return source
    .split('\n')
    .filter((line) => line.trim() !== '' && !COMMENT_LINE.test(line))
    .join('\n');
}

let statements: ReadonlyMap<StatementName, string> | null = null;

/** Every statement, read once per process, with its placeholders. */
export function statement(name: StatementName): string {
  statements ??= new Map(STATEMENT_NAMES.map((n) => [n, loadStatement(n)]));
  return statements.get(name)!;
}

export interface Migration {
  /** Its number: the schema's version once it is applied. */
  readonly version: number;
  /** The file's name without `.sql`, e.g. `0002_shared`. */
  readonly name: string;
  /** The file as it is, with the placeholders. */
  readonly sql: string;
}

const MIGRATION_FILE = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The migrations, in order: numbered from 1 without a gap (a file out of line is a broken build, refused). */
export function loadMigrations(): Migration[] {
  const files = readdirSync(MIGRATIONS_DIR)
    .filter((file) => file.endsWith('.sql'))
    .sort();
  return files.map((file, i) => {
    const match = MIGRATION_FILE.exec(file);
    if (match === null || Number(match[1]) !== i + 1) throw new Error(`postgres migrations: ${file} is out of line (expected ${String(i + 1).padStart(4, '0')}_<name>.sql)`);
    return { version: i + 1, name: file.slice(0, -'.sql'.length), sql: readFileSync(new URL(file, MIGRATIONS_DIR), 'utf8') };
  });
}
