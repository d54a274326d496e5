// Runs test/**/*.test.ts under node's test runner with tsx (Node 20's --test does not
// expand globs, so the file list is built here).
// Usage: tsx scripts/run-tests.ts [--tier fast|redis|postgres|browser] [--list] [substring ...]
//   no tier: every file (npm test); --tier: that tier's files (scripts/test-tiers.ts);
//   substrings: only files whose path contains one of them; --list: the chosen files and
//   what each needs, and nothing run.
// First what the chosen files need is checked or started (scripts/test-services.ts: a
// missing binary fails the run with its install command; PostgreSQL is found or started
// once and handed to every file as $DELAYQ_TEST_PG, and stopped after). Then the fast
// files run, in a node --test of their own with scripts/fast-tier-guard.ts loaded (a fast
// file that starts a process or connects to a server fails, however it was chosen), and
// then the others.
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { prepareServices } from './test-services.js';
import { classify, findTests, isTier, NEEDS, nodeTestArgs, TIERS, type ClassifiedTest, type Need } from './test-tiers.js';

const { values, positionals: filters } = parseArgs({ options: { tier: { type: 'string' }, list: { type: 'boolean', default: false } }, allowPositionals: true });
const tier = values.tier;
if (tier !== undefined && !isTier(tier)) {
  console.error(`unknown tier '${tier}'; known: ${Object.keys(TIERS).join(', ')}`);
  process.exit(2);
}

const chosen = classify(findTests('test')).filter(
  ({ file, needs }) => (tier === undefined || TIERS[tier].select(needs)) && (filters.length === 0 || filters.some((s) => file.includes(s))),
);
if (chosen.length === 0) {
  console.error(`no test files match${tier === undefined ? '' : ` tier ${tier}`}${filters.length === 0 ? '' : ` and ${filters.join(', ')}`}`);
  process.exit(1);
}
if (values.list) {
  for (const { file, needs } of chosen) console.log(`${file}\t${needs.size === 0 ? 'fast' : [...needs].sort().join(', ')}`);
  console.log('\ntiers (npm run test:<tier>):');
  for (const [name, { select, about }] of Object.entries(TIERS)) console.log(`  ${name}: ${chosen.filter((t) => select(t.needs)).length} of these files; ${about}`);
  console.log('needs:');
  for (const [name, { what, install }] of Object.entries(NEEDS)) console.log(`  ${name}: ${what}${install === null ? '' : ` (${install})`}`);
  process.exit(0);
}

const fast = chosen.filter(({ needs }) => TIERS.fast.select(needs));
const others = chosen.filter(({ needs }) => !TIERS.fast.select(needs));
const needs = new Set<Need>(others.flatMap(({ needs: n }) => [...n]));

// A Ctrl-C reaches the test processes by itself; a cluster started for the run (pg_ctl puts
// it in a session of its own) is stopped below, so the runner lives on until then.
let running: ReturnType<typeof spawn> | null = null;
let interrupted: NodeJS.Signals | null = null;
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.on(signal, () => {
    interrupted = signal;
    running?.kill(signal);
  });

const services = await prepareServices(needs).catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : String(error));
  return process.exit(1);
});
for (const note of services.notes) console.log(`# ${note}`);

/** One node --test over `files`; its exit code. */
function runFiles(files: readonly ClassifiedTest[], guarded: boolean): Promise<number> {
  const child = spawn(process.execPath, [...nodeTestArgs({ guarded }), '--test-reporter=spec', ...files.map(({ file }) => file)], { stdio: 'inherit', env: { ...process.env, ...services.env } });
  running = child;
  return new Promise((resolve) => child.once('exit', (code) => resolve(code ?? 1)));
}

const failed: string[] = [];
try {
  for (const [files, guarded, name] of [
    [fast, true, 'fast tier'],
    [others, false, 'other tiers'],
  ] as const) {
    if (files.length === 0 || interrupted !== null) continue;
    const started = performance.now();
    const code = await runFiles(files, guarded);
    console.log(`# ${name}: ${files.length} files in ${((performance.now() - started) / 1000).toFixed(1)} s${code === 0 ? '' : `, exit code ${code}`}`);
    if (code !== 0) failed.push(name);
  }
} finally {
  services.stop();
}
process.exit(interrupted !== null ? 130 : failed.length > 0 ? 1 : 0);
