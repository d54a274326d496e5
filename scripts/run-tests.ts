// Runs every test/**/*.test.ts under node's test runner with tsx.
// Node 20's --test does not expand globs, so the file list is built here.
// Usage: tsx scripts/run-tests.ts [substring ...]  (only files whose path contains one of them)
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

function findTests(dir: string): string[] {
  const found: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith('.test.ts')) found.push(path);
  }
  return found.sort();
}

const filters = process.argv.slice(2);
const files = findTests('test').filter((f) => filters.length === 0 || filters.some((s) => f.includes(s)));
if (files.length === 0) {
  console.error(`no test files match ${filters.join(', ')}`);
  process.exit(1);
}
// --test-force-exit: a test file ends when its tests have, even if a client it opened
// still holds the event loop (a Redis Cluster client reconnecting to a cluster the file has
// already stopped did, under heavy load), instead of hanging the whole run. Its reports
// must reach the runner before that exit: scripts/blocking-stdout.ts.
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--import', './scripts/blocking-stdout.ts', '--test', '--test-concurrency=2', '--test-force-exit', '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
