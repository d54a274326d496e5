/**
 * `prepare`: installing delayq from source (a path here; a git url goes through the same
 * DirFetcher of npm) builds dist, while `npm ci` / `npm install` in the project's own
 * checkout builds nothing and costs next to nothing.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { buildWanted, distFresh } from '../../scripts/prepare.js';

const root = resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const work = mkdtempSync(join(tmpdir(), 'delayq-prepare-'));

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_loglevel: 'error', ...env } });
}

/** The files git tracks, as a clone has them, with the build's tools linked in. */
function exportCheckout(to: string): void {
  for (const file of run('git', ['ls-files', '-z'], root).split('\0')) {
    if (file === '' || !existsSync(join(root, file))) continue;
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(root, file), join(to, file));
  }
  symlinkSync(join(root, 'node_modules'), join(to, 'node_modules'), 'dir');
}

after(() => rmSync(work, { recursive: true, force: true }));

describe('when prepare builds', () => {
  it('as a dependency packed by npm (git url, --install-links path) or a path linked from elsewhere; never in its own checkout', () => {
    const here = '/src/delayq';
    assert.equal(buildWanted({ npm_package_resolved: `file:${here}`, INIT_CWD: here }, here), true);
    assert.equal(buildWanted({ INIT_CWD: '/home/me/app' }, here), true);
    // npm ci / npm install in the checkout itself.
    assert.equal(buildWanted({ INIT_CWD: here }, here), false);
    assert.equal(buildWanted({ INIT_CWD: `${here}/` }, here), false);
    assert.equal(buildWanted({ INIT_CWD: `${here}/docs` }, here), false);
    assert.equal(buildWanted({ INIT_CWD: `${here}-fork` }, here), true);
    // The install pacote runs in a git clone before its own prepare: that prepare builds.
    assert.equal(buildWanted({ _PACOTE_NO_PREPARE_: 'git+https://x/delayq.git', INIT_CWD: '/tmp/clone' }, here), false);
    assert.equal(buildWanted({}, here), false);
  });

  it('not when dist is newer than every source (npm pack: prepack built it just before)', () => {
    const dir = join(work, 'fresh');
    mkdirSync(join(dir, 'src', 'core'), { recursive: true });
    mkdirSync(join(dir, 'dist', 'cli'), { recursive: true });
    writeFileSync(join(dir, 'src', 'core', 'a.ts'), '');
    writeFileSync(join(dir, 'tsconfig.build.json'), '{}');
    writeFileSync(join(dir, 'dist', 'cli', 'main.js'), '');
    const at = (path: string, seconds: number): void => utimesSync(path, seconds, seconds);
    at(join(dir, 'src', 'core', 'a.ts'), 1_000);
    at(join(dir, 'src', 'core'), 1_000);
    at(join(dir, 'src'), 1_000);
    at(join(dir, 'tsconfig.build.json'), 1_000);
    at(join(dir, 'dist', 'cli', 'main.js'), 2_000);
    assert.equal(distFresh(dir), true);
    at(join(dir, 'src', 'core', 'a.ts'), 3_000);
    assert.equal(distFresh(dir), false);
    rmSync(join(dir, 'dist'), { recursive: true });
    assert.equal(distFresh(dir), false);
  });
});

describe('prepare, run by npm', { timeout: 300_000 }, () => {
  const checkout = join(work, 'checkout');
  exportCheckout(checkout);

  it('in its own checkout (as npm ci runs it): builds nothing', () => {
    run(npm, ['run', 'prepare'], checkout, { INIT_CWD: checkout });
    assert.ok(!existsSync(join(checkout, 'dist')));
  });

  it('installed from a path into another project: dist is built, and its binary runs', () => {
    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }));
    // --install-links: npm packs the folder as it packs a git clone, prepare included.
    run(npm, ['install', checkout, '--install-links', '--omit=optional', '--prefer-offline', '--no-audit', '--no-fund'], app);
    assert.ok(existsSync(join(app, 'node_modules', 'delayq', 'dist', 'cli', 'main.js')), 'dist is in the installed package');
    assert.match(run(join(app, 'node_modules', '.bin', 'delayq'), ['--version'], app), /^0\.1\.0$/m);
  });
});
