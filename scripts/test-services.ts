/**
 * What the chosen test files need, made ready before they run (scripts/run-tests.ts): one
 * rule for every service, start it if its binaries are installed, else fail with the command
 * that installs it; nothing is skipped. Redis, Prometheus and Chromium are started by the
 * tests themselves (on free ports, stopped by PID), so here their binaries are checked;
 * PostgreSQL is found or started once for the whole run (test/helpers/postgres-server.ts)
 * and handed to the test processes as $DELAYQ_TEST_PG.
 */
import { existsSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { NEEDS, type Need } from './test-tiers.js';

export interface PreparedServices {
  /** Variables for the test processes. */
  readonly env: Readonly<Record<string, string>>;
  /** What was found or started, one line each. */
  readonly notes: readonly string[];
  /** Stops what was started for the run; synchronous (a signal handler calls it), idempotent. */
  stop(): void;
}

function onPath(name: string, extra: readonly string[] = []): boolean {
  return [...(process.env['PATH'] ?? '').split(delimiter), ...extra].some((dir) => dir !== '' && existsSync(join(dir, name)));
}

function failure(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** Null when `need` is there, else why not (with the install command). */
async function check(need: Exclude<Need, 'postgres'>): Promise<string | null> {
  switch (need) {
    case 'processes':
      return null;
    case 'redis':
      return (await import('../test/helpers/redis-servers.js')).redisMissing();
    case 'postgres-bin':
      return (await import('../test/helpers/postgres-cluster.js')).postgresBinariesMissing();
    case 'chromium':
      try {
        (await import('../test/helpers/browser.js')).chromiumPath();
        return null;
      } catch (error) {
        return failure(error);
      }
    case 'prometheus':
      try {
        const { prometheusPath, promtoolPath } = await import('../test/helpers/prometheus.js');
        prometheusPath();
        promtoolPath();
        return null;
      } catch (error) {
        return failure(error);
      }
    case 'pgbouncer':
      return onPath('pgbouncer', ['/usr/sbin', '/usr/bin']) ? null : `pgbouncer not found on PATH or /usr/sbin: install it (${NEEDS.pgbouncer.install}), as .ci/run does`;
  }
}

/** Checks or starts everything in `needs`; throws one error listing every need that is missing. */
export async function prepareServices(needs: ReadonlySet<Need>): Promise<PreparedServices> {
  const problems: string[] = [];
  for (const need of needs) {
    if (need === 'postgres') continue;
    const missing = await check(need);
    if (missing !== null) problems.push(`${need}: ${missing}`);
  }
  const env: Record<string, string> = {};
  const notes: string[] = [];
  let stop = (): void => undefined;
  if (needs.has('postgres') && problems.length === 0) {
    try {
      const { testPostgres } = await import('../test/helpers/postgres-server.js');
      const server = await testPostgres(process.env['DELAYQ_TEST_PG']);
      env['DELAYQ_TEST_PG'] = server.url;
      notes.push(`PostgreSQL: ${server.description}`);
      const cluster = server.cluster;
      if (cluster !== null) stop = () => cluster.remove();
    } catch (error) {
      problems.push(`postgres: ${failure(error)}`);
    }
  }
  if (problems.length > 0) throw new Error(`the chosen tests need what this machine lacks:\n  ${problems.join('\n  ')}`);
  return { env, notes, stop };
}
