import type { Command } from 'commander';
import { createOutput } from '../output.js';
import { RequestFailed, UsageError, type GlobalOptions } from '../context.js';
import type { MigrationReport } from '../../stores/open-store.js';
import { STORE_OPTIONS } from '../../core/option-table/index.js';

const SCHEMA = STORE_OPTIONS.schema;

interface MigrateOptions {
  store?: string;
  schema?: string;
  print?: boolean;
  status?: boolean;
}

/**
 * migrate: a PostgreSQL schema's migrations as a step of their own (docs/postgres.md,
 * "Migrations"): applied by the role that owns the schema, before the processes that run
 * with `migrate=never` roll. Talks to the database, not to a server.
 */
export function registerMigrateCommand(program: Command): void {
  program
    .command('migrate')
    .description("apply a PostgreSQL schema's pending migrations and exit (--print: the SQL, changing nothing; --status: which are applied)")
    .option('--store <url>', 'the store, postgres://user@host:port/db?schema=name [DELAYQ_STORE]')
    // The row `delayq serve` reads too: a schema given by DELAYQ_SCHEMA is the one migrated.
    .option(`--schema <name>`, `${SCHEMA.description} [${SCHEMA.env}, default ${SCHEMA.default}]`)
    .option('--print', 'print the SQL it would run (one transaction, for review or psql) and change nothing')
    .option('--status', 'say which migrations are applied and which are pending, and change nothing')
    .action(async (options: MigrateOptions, command: Command) => {
      const spec = options.store ?? process.env['DELAYQ_STORE'];
      if (spec === undefined || spec === '') throw new UsageError('migrate: give --store postgres://user@host:port/db?schema=name (or DELAYQ_STORE)');
      if (options.print === true && options.status === true) throw new UsageError('migrate: --print or --status, not both');
      const out = createOutput(command.optsWithGlobals<GlobalOptions>().json === true);
      // Loaded here: the store's driver only when this command runs (as serve loads the server).
      const { openMigrator } = await import('../../stores/open-store.js');
      const schema = options.schema ?? process.env[SCHEMA.env];
      const migrator = await openMigrator(spec, schema === undefined || schema === '' ? {} : { schema }).catch(asFailure);
      try {
        if (options.status === true) {
          const report = await migrator.status().catch(asFailure);
          out.result(report, () => describe(report));
        } else if (options.print === true) {
          const script = await migrator.script().catch(asFailure);
          if (out.json) out.result({ sql: script }, () => script);
          else process.stdout.write(script === '' ? '-- nothing to apply: the schema is at this delayq\'s version (or ahead of it)\n' : script);
        } else {
          const report = await migrator.apply().catch(asFailure);
          out.result(report, () =>
            report.from === report.version ? `schema "${report.schema}": at version ${report.version}, nothing to apply` : `schema "${report.schema}": migrated from version ${report.from} to ${report.version} (${report.applied.slice(report.from).join(', ')})`,
          );
        }
      } finally {
        await migrator.close().catch(() => undefined);
      }
    });
}

function describe(report: MigrationReport): string {
  const where = report.exists ? `schema "${report.schema}"` : `schema "${report.schema}" (missing: the first migration creates it)`;
  const state =
    report.version === report.latest ? 'current' : report.version < report.latest ? `behind: ${report.pending.length} pending` : `ahead: migrated by a newer delayq (this one knows up to ${report.latest})`;
  return [`${where}: version ${report.version} of ${report.latest}, ${state}`, ...report.applied.map((name) => `  applied  ${name}`), ...report.pending.map((name) => `  pending  ${name}`)].join('\n');
}

/** A store error as the CLI reports one: its code and message, exit code 1. */
function asFailure(error: unknown): never {
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof code === 'string' && /^[A-Z_]+$/.test(code)) throw new RequestFailed(code as RequestFailed['code'], error.message);
  throw error;
}
