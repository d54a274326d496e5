/**
 * The package as a user gets it. From a clean export of the repository (the files git
 * tracks, nothing built), `npm pack` must build `dist` itself (`prepack`); the tarball,
 * installed into a fresh project, must run its `delayq` binary and serve both entry points.
 *
 * The install is offline-friendly and fast: from the local npm cache, without install
 * scripts and without optional dependencies, so better-sqlite3 is not there at all. That is
 * the point as much as the speed: a memory-store user never loads a store driver (the
 * SQLite and Redis stores import theirs when opened; docs/adr/0002-store-drivers.md).
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'delayq-pack-'));
const exported = join(work, 'export');
const consumer = join(work, 'consumer');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: readonly string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } });
}

/** What a clone has: every tracked file, as it is in the working tree (edits not yet committed included). */
function exportTrackedFiles(to: string): void {
  for (const file of run('git', ['ls-files', '-z'], root).split('\0')) {
    if (file === '' || !existsSync(join(root, file))) continue; // deleted, not yet committed
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(root, file), join(to, file));
  }
}

describe('the packed package', { timeout: 300_000 }, () => {
  let tarball = '';
  let files: string[] = [];

  before(() => {
    exportTrackedFiles(exported);
    assert.ok(!existsSync(join(exported, 'dist')), 'the export starts without a build');
    // The build's tools; a clone would have them from `npm ci`.
    symlinkSync(join(root, 'node_modules'), join(exported, 'node_modules'), 'dir');
    run(npm, ['pack', '--pack-destination', work], exported);
    const packed = readdirSync(work).filter((name) => name.endsWith('.tgz'));
    assert.equal(packed.length, 1, `one tarball: ${packed.join(', ')}`);
    tarball = join(work, packed[0]!);
    files = run('tar', ['tzf', tarball], work)
      .split('\n')
      .filter((line) => line.length > 0 && !line.endsWith('/'))
      .map((line) => line.replace(/^package\//, ''));

    mkdirSync(consumer);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    run(npm, ['install', tarball, '--ignore-scripts', '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund'], consumer);
  });
  after(() => rmSync(work, { recursive: true, force: true }));

  it('ships dist, built by prepack, with declarations, the Lua scripts, the SQL files, the dashboard and the binary; no sources or tests', () => {
    for (const file of ['package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/client/index.js', 'dist/client/index.d.ts', 'dist/cli/main.js', 'dist/stores/redis/lua/schedule.lua', 'dist/stores/postgres/sql/ack.sql', 'dist/stores/postgres/sql/includes/counted.sql', 'dist/stores/postgres/sql/migrations/0001_initial.sql', 'dist/server/ui/index.html', 'dist/server/ui/app.js', 'dist/testing/index.js', 'dist/testing/shared-node.js'])
      assert.ok(files.includes(file), `${file} is packed`);
    assert.deepEqual(
      files.filter((f) => f.startsWith('src/') || f.startsWith('test/') || f.startsWith('bench/') || f.startsWith('scripts/')),
      [],
      'sources, tests, benchmarks and scripts stay out of the package',
    );
  });

  it('runs `delayq --help` from node_modules/.bin, as npx does: the shebang survives the build', () => {
    const bin = join(consumer, 'node_modules/.bin/delayq');
    assert.ok((statSync(bin).mode & 0o111) !== 0, 'the binary is executable');
    const help = run(bin, ['--help'], consumer);
    assert.match(help, /^Usage: delayq/m);
    assert.match(help, /serve/);
    assert.match(help, /cancel/);
  });

  it('schedules and reserves on the memory store without loading a store driver', () => {
    writeFileSync(
      join(consumer, 'smoke.mjs'),
      `import { createRequire } from 'node:module';
import { DelayQueue, DelayQError, ManualClock } from 'delayq';
const clock = new ManualClock();
const q = await DelayQueue.open({ store: 'memory', clock });
const { id, runAt } = await q.schedule({ topic: 'smoke', delayMs: 1000, payload: { ok: true } });
const early = await q.reserve('smoke');
clock.advance(1000);
const due = await q.reserve('smoke');
await q.ack(due[0].id, due[0].receipt);
let typedError = false;
try { await q.schedule({ topic: 'bad topic' }); } catch (e) { typedError = e instanceof DelayQError && e.code === 'INVALID_TOPIC'; }
await q.close();
// CommonJS packages (ioredis, better-sqlite3) land in the require cache even when imported from ESM.
const loaded = (cache) => Object.keys(cache).filter((p) => /node_modules[\\\\/](ioredis|better-sqlite3)[\\\\/]/.test(p)).length > 0;
const require = createRequire(import.meta.url);
const driversBefore = loaded(require.cache);
await import('ioredis');
const driversAfter = loaded(require.cache);
let sqlite = '';
try { await DelayQueue.open({ store: 'sqlite:' + process.cwd() + '/x.db' }); } catch (e) { sqlite = e.code; }
console.log(JSON.stringify({ early: early.length, due: due.map((d) => [d.id === id, d.runAt === runAt, d.payload]), typedError, driversBefore, driversAfter, sqlite }));
`,
    );
    const out = JSON.parse(run(process.execPath, ['smoke.mjs'], consumer).trim()) as Record<string, unknown>;
    assert.deepEqual(out, {
      early: 0,
      due: [[true, true, { ok: true }]],
      typedError: true,
      driversBefore: false,
      // The check above can see a driver: it sees ioredis once imported.
      driversAfter: true,
      // better-sqlite3 is optional and was left out: opening a SQLite store says so.
      sqlite: 'STORE_UNAVAILABLE',
    });
  });

  it('runs delayq/testing: the store suite, under node --test, against a store the consumer opens', () => {
    writeFileSync(
      join(consumer, 'store.test.mjs'),
      `import { MemoryStore } from 'delayq';
import { runStoreConformance } from 'delayq/testing';
runStoreConformance('memory, from the package', async () => ({ store: new MemoryStore() }));
`,
    );
    // Without NODE_TEST_CONTEXT, which this runner sets and which makes a nested `node --test` report in its binary form.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const report = execFileSync(process.execPath, ['--test', '--test-reporter=tap', 'store.test.mjs'], { cwd: consumer, encoding: 'utf8', env });
    const count = (name: string): number => Number(new RegExp(`^# ${name} (\\d+)$`, 'm').exec(report)?.[1] ?? NaN);
    assert.equal(count('fail'), 0, report.slice(-2_000));
    assert.ok(count('pass') >= 63, `the whole suite ran (63 cases when this test was written): ${count('pass')} passed`);
  });

  it('serves delayq/client, and types a TypeScript consumer from the emitted declarations', () => {
    writeFileSync(join(consumer, 'client.mjs'), `import { DelayQClient, CORE_ERROR_CODES } from 'delayq/client';\nconsole.log(typeof DelayQClient, CORE_ERROR_CODES.includes('TASK_NOT_FOUND'));\n`);
    assert.equal(run(process.execPath, ['client.mjs'], consumer).trim(), 'function true');

    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { DelayQueue, type Delivery, type TaskInfo } from 'delayq';
import { DelayQClient, type TaskView } from 'delayq/client';
const q: DelayQueue = await DelayQueue.open({ store: 'memory' });
const result: { id: string; runAt: number; created: boolean } = await q.schedule({ topic: 't', delayMs: 5 });
const info: TaskInfo<{ n: number }> | null = await q.get<{ n: number }>(result.id);
q.work<{ n: number }>('t', (d: Delivery<{ n: number }>) => { const n: number = d.payload.n; void n; });
const client = new DelayQClient({ url: 'http://127.0.0.1:1' });
const view: Promise<TaskView | null> = client.get('x');
void info; void view;
await q.close();
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, types: [] }, files: ['consumer.ts'] }),
    );
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], consumer);
  });
});
