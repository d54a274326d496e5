/**
 * The package works when installed into another project: build, `npm pack`, install the
 * tarball into a fresh temp project, then import it from JavaScript and type-check a
 * TypeScript consumer against the emitted declarations.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';

const root = resolve(import.meta.dirname, '../..');
const work = mkdtempSync(join(tmpdir(), 'delayq-pack-'));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error' } });
}

describe('the packed package', { timeout: 300_000 }, () => {
  after(() => rmSync(work, { recursive: true, force: true }));

  it('installs from its tarball and works from JavaScript and TypeScript', () => {
    run(npm, ['run', 'build'], root);
    const packed = JSON.parse(run(npm, ['pack', '--json', '--pack-destination', work], root)) as { filename: string; files: { path: string }[] }[];
    const tarball = join(work, packed[0]!.filename);
    const files = packed[0]!.files.map((f) => f.path);
    assert.ok(files.includes('dist/index.js') && files.includes('dist/index.d.ts'), 'dist with declarations is packed');
    assert.ok(files.includes('dist/stores/redis/lua/schedule.lua'), 'the Lua scripts of the Redis store are packed');
    assert.ok(!files.some((f) => f.startsWith('src/') || f.startsWith('test/')), 'sources and tests stay out of the package');

    const consumer = join(work, 'consumer');
    run('mkdir', ['-p', consumer], work);
    writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    // --ignore-scripts: the consumer only uses the memory store, so no native build is needed.
    run(npm, ['install', tarball, '--ignore-scripts', '--prefer-offline', '--no-audit', '--no-fund'], consumer);

    writeFileSync(
      join(consumer, 'smoke.mjs'),
      `import { DelayQueue, DelayQError, TimingWheel } from 'delayq';
const q = await DelayQueue.open({ store: 'memory' });
const fired = new Promise((resolve) => q.work('smoke', (d) => resolve(d.payload)));
const { runAt } = await q.schedule({ topic: 'smoke', delayMs: 20, payload: { ok: true } });
let early = false;
try { await q.schedule({ topic: 'bad topic' }); } catch (e) { early = e instanceof DelayQError && e.code === 'INVALID_TOPIC'; }
const payload = await fired;
const late = Date.now() - runAt;
await q.close();
console.log(JSON.stringify({ payload, typedError: early, notEarly: late >= 0, wheel: typeof TimingWheel }));
`,
    );
    const out = JSON.parse(run(process.execPath, ['smoke.mjs'], consumer).trim()) as Record<string, unknown>;
    assert.deepEqual(out, { payload: { ok: true }, typedError: true, notEarly: true, wheel: 'function' });

    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { DelayQueue, type Delivery, type TaskInfo } from 'delayq';
const q: DelayQueue = await DelayQueue.open({ store: 'memory' });
const result: { id: string; runAt: number; created: boolean } = await q.schedule({ topic: 't', delayMs: 5 });
const info: TaskInfo<{ n: number }> | null = await q.get<{ n: number }>(result.id);
q.work<{ n: number }>('t', (d: Delivery<{ n: number }>) => { const n: number = d.payload.n; void n; });
void info;
await q.close();
`,
    );
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { strict: true, module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', noEmit: true, types: [] }, files: ['consumer.ts'] }),
    );
    run(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json'], consumer);
    const pkg = JSON.parse(readFileSync(join(consumer, 'node_modules/delayq/package.json'), 'utf8')) as { name: string };
    assert.equal(pkg.name, 'delayq');

    // The client entry point and the CLI binary.
    writeFileSync(join(consumer, 'client.mjs'), `import { DelayQClient } from 'delayq/client';\nconsole.log(typeof DelayQClient);\n`);
    assert.equal(run(process.execPath, ['client.mjs'], consumer).trim(), 'function');
    const help = run(join(consumer, 'node_modules/.bin/delayq'), ['--help'], consumer);
    assert.match(help, /serve/);
    assert.match(help, /demo/);
  });
});
