// npm's `prepare`: builds dist when this package is being installed as a dependency from
// source (a git url, or a path), where nobody ran `npm run build`; does nothing in the
// project's own checkout (`npm ci`, `npm install` there: the tests run the sources through
// tsx, and CI would pay a full build for nothing) and nothing when dist is already newer
// than every source (`npm pack` runs prepack, which builds, and then prepare).
//
// How npm says "as a dependency": pacote packs a git clone or a directory (`--install-links`)
// through its DirFetcher, which runs prepare with npm_package_resolved set; a path linked
// into another project runs it with INIT_CWD (where npm was started) elsewhere. The `npm
// install` pacote runs first in a git clone (_PACOTE_NO_PREPARE_ set) only puts the build's
// tools in place; the DirFetcher's prepare right after it builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

export function buildWanted(env: NodeJS.ProcessEnv, root: string): boolean {
  if (env['npm_package_resolved'] !== undefined && env['npm_package_resolved'] !== '') return true;
  if (env['_PACOTE_NO_PREPARE_'] !== undefined) return false;
  const initCwd = env['INIT_CWD'];
  if (initCwd === undefined || initCwd === '') return false;
  // npm started in the checkout or one of its folders: the project's own install.
  const from = resolve(initCwd);
  return from !== resolve(root) && !from.startsWith(resolve(root) + sep);
}

function newest(path: string): number {
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let latest = stat.mtimeMs;
  for (const name of readdirSync(path)) latest = Math.max(latest, newest(join(path, name)));
  return latest;
}

/** dist holds a build at least as new as every source it is built from. */
export function distFresh(root: string): boolean {
  const built = join(root, 'dist', 'cli', 'main.js');
  if (!existsSync(built)) return false;
  const sources = Math.max(newest(join(root, 'src')), statSync(join(root, 'tsconfig.build.json')).mtimeMs);
  return statSync(built).mtimeMs >= sources;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(fileURLToPath(import.meta.url), '..', '..');
  if (existsSync(join(root, 'src')) && buildWanted(process.env, root) && !distFresh(root)) {
    console.error('delayq: building dist (prepare)');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const result = spawnSync(npm, ['run', 'build'], { cwd: root, stdio: 'inherit' });
    process.exit(result.status ?? 1);
  }
}
