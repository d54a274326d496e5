/**
 * The test tiers, read from what each test file needs outside its own process.
 *
 * A file's needs are read from its imports, followed through every relative import
 * (test helpers and src alike) to the packages at the end:
 * - a package of NEEDS_OF_PACKAGE (node:child_process: processes), and in test/ files
 *   one of NEEDS_OF_PACKAGE_IN_TESTS (ioredis: redis; pg: postgres; playwright-core:
 *   chromium ...);
 * - a line `// test-needs: <need>, <need>` in any file on the way: a helper that starts a
 *   server says so (test/helpers/redis-servers.ts: `redis`), and so may a test that reaches
 *   one by a store URL alone.
 * Static imports are followed everywhere, `import()` only in test/: src loads a store and
 * its driver with `import()` when a queue opens it, and a test that opens a Redis or
 * PostgreSQL store gets its server through a helper that names the need.
 *
 * The fast tier is every file that needs nothing, so a new test file falls in it or out of
 * it by what it imports. It is checked as it runs: scripts/fast-tier-guard.ts fails a fast
 * file that spawns a process or connects to a port this process does not listen on.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';

/** What a test may need beyond its own process, with what provides it. */
export const NEEDS = {
  processes: { what: 'child processes (node, npm, the delayq CLI, fixtures it kills)', install: null },
  redis: { what: 'redis-server and redis-cli: each test starts servers of its own on free ports', install: 'apt-get install redis-server redis-tools' },
  postgres: {
    what: 'a PostgreSQL server: $DELAYQ_TEST_PG, else 127.0.0.1:5432 (user postgres, database test), else one the run starts with initdb + pg_ctl',
    install: 'apt-get install postgresql',
  },
  'postgres-bin': { what: 'initdb and pg_ctl: tests that stop, crash or freeze a cluster of their own', install: 'apt-get install postgresql' },
  pgbouncer: { what: 'pgbouncer', install: 'apt-get install pgbouncer' },
  chromium: { what: "Debian's headless Chromium (driven by playwright-core)", install: 'apt-get install chromium-headless-shell (or chromium)' },
  prometheus: { what: 'prometheus and promtool', install: 'apt-get install prometheus' },
} as const;

export type Need = keyof typeof NEEDS;

/** Packages that make a process wherever they are imported. */
const NEEDS_OF_PACKAGE: ReadonlyMap<string, Need> = new Map<string, Need>([
  ['node:child_process', 'processes'],
  ['child_process', 'processes'],
  ['node:cluster', 'processes'],
]);

/**
 * Drivers and browsers, when a file under test/ imports them: it connects to a server or
 * starts a browser. src imports its drivers too, and connects only when a store is opened
 * on a URL (which a test gets from a helper that names the need).
 */
const NEEDS_OF_PACKAGE_IN_TESTS: ReadonlyMap<string, Need> = new Map<string, Need>([
  ['ioredis', 'redis'],
  ['bullmq', 'redis'],
  ['pg', 'postgres'],
  ['postgres', 'postgres'],
  ['pg-boss', 'postgres'],
  ['graphile-worker', 'postgres'],
  ['playwright-core', 'chromium'],
]);

/** The tiers a contributor runs: each selects the test files by their needs. */
export const TIERS = {
  fast: { select: (needs: ReadonlySet<Need>) => needs.size === 0, about: 'no process, server or browser: core, engine, memory and SQLite stores, the server through inject() and ephemeral ports' },
  redis: { select: (needs: ReadonlySet<Need>) => needs.has('redis'), about: 'every file that starts a redis-server' },
  postgres: { select: (needs: ReadonlySet<Need>) => needs.has('postgres') || needs.has('postgres-bin'), about: 'every file that uses a PostgreSQL server or cluster' },
  browser: { select: (needs: ReadonlySet<Need>) => needs.has('chromium'), about: 'the dashboard and cross-origin tests in Chromium' },
} as const;

export type Tier = keyof typeof TIERS;

export function isTier(name: string): name is Tier {
  return Object.hasOwn(TIERS, name);
}

function isNeed(name: string): name is Need {
  return Object.hasOwn(NEEDS, name);
}

/** Every *.test.ts under `dir`, sorted. */
export function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found.sort();
}

// `import type` and `export type` load nothing at run time.
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\s)[^'";]*?['"]([^'"]+)['"]/gm;
const DYNAMIC_IMPORT = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;
const NEEDS_LINE = /^\/\/ test-needs: (.+)$/gm;

/** The source file a relative specifier names (`./x.js` is `./x.ts` here), or null (JSON, a missing file). */
function resolveRelative(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  const candidates = [base, base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')];
  return candidates.find((path) => /\.(ts|js|mjs)$/.test(path) && existsSync(path) && statSync(path).isFile()) ?? null;
}

interface FileFacts {
  /** From its packages and test-needs lines. */
  readonly needs: ReadonlySet<Need>;
  /** The files it imports (resolved; type-only imports left out). */
  readonly imports: readonly string[];
}

/** Reads each file's needs, following imports; reads each file once. */
export class NeedsReader {
  private readonly facts = new Map<string, FileFacts>();
  private readonly testRoot: string;

  constructor(testRoot = 'test') {
    this.testRoot = resolve(testRoot);
  }

  /** The needs of `file` and of every file it reaches by its imports. */
  needsOf(file: string): ReadonlySet<Need> {
    const needs = new Set<Need>();
    const seen = new Set<string>([resolve(file)]);
    const queue = [resolve(file)];
    for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
      const facts = this.factsOf(next);
      for (const need of facts.needs) needs.add(need);
      for (const target of facts.imports)
        if (!seen.has(target)) {
          seen.add(target);
          queue.push(target);
        }
    }
    return needs;
  }

  private factsOf(file: string): FileFacts {
    const known = this.facts.get(file);
    if (known !== undefined) return known;
    const source = readFileSync(file, 'utf8');
    const needs = new Set<Need>();
    for (const [, list] of source.matchAll(NEEDS_LINE))
      for (const name of (list ?? '').split(',').map((s) => s.trim())) {
        if (!isNeed(name)) throw new Error(`${relative(process.cwd(), file)}: unknown need '${name}' in a test-needs line (known: ${Object.keys(NEEDS).join(', ')})`);
        needs.add(name);
      }
    const inTests = file.startsWith(this.testRoot + sep);
    const specs = [...source.matchAll(STATIC_IMPORT)].map((m) => m[1] ?? '');
    if (inTests) specs.push(...[...source.matchAll(DYNAMIC_IMPORT)].map((m) => m[1] ?? ''));
    const imports: string[] = [];
    for (const spec of specs) {
      if (spec.startsWith('.')) {
        const target = resolveRelative(file, spec);
        if (target !== null) imports.push(target);
      } else {
        const need = NEEDS_OF_PACKAGE.get(spec) ?? (inTests ? NEEDS_OF_PACKAGE_IN_TESTS.get(spec) : undefined);
        if (need !== undefined) needs.add(need);
      }
    }
    const facts = { needs, imports };
    this.facts.set(file, facts);
    return facts;
  }
}

export interface ClassifiedTest {
  readonly file: string;
  readonly needs: ReadonlySet<Need>;
}

export function classify(files: readonly string[], reader = new NeedsReader()): ClassifiedTest[] {
  return files.map((file) => ({ file, needs: reader.needsOf(file) }));
}

// No --test-force-exit: a test file must end on its own, having closed every queue, store,
// server and client it opened. --test-timeout bounds each test and also each file as a
// whole (node:test runs a file as one test of the runner), so a file that leaks a handle
// (its tests pass, its process never exits) fails after FILE_TIMEOUT_MS instead of hanging
// the run. Find the handle with process.getActiveResourcesInfo() in an after() hook.
const FILE_TIMEOUT_MS = 300_000;
const GUARD = pathToFileURL(resolve(import.meta.dirname, 'fast-tier-guard.ts')).href;

/** Node's arguments before the files, for a tier's node --test: `guarded` for the fast tier. */
export function nodeTestArgs({ guarded }: { readonly guarded: boolean }): string[] {
  return ['--import', 'tsx', ...(guarded ? ['--import', GUARD] : []), '--test', '--test-concurrency=2', `--test-timeout=${FILE_TIMEOUT_MS}`];
}
