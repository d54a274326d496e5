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
// No --test-force-exit: a test file must end on its own, having closed every queue, store,
// server and client it opened. --test-timeout bounds each test and also each file as a
// whole (node:test runs a file as one test of the runner), so a file that leaks a handle
// (its tests pass, its process never exits) fails after FILE_TIMEOUT_MS instead of hanging
// the run. Find the handle with process.getActiveResourcesInfo() in an after() hook.
const FILE_TIMEOUT_MS = 300_000;
const result = spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', `--test-timeout=${FILE_TIMEOUT_MS}`, '--test-reporter=spec', ...files],
  { stdio: 'inherit' },
);
process.exit(result.status ?? 1);
