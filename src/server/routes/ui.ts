/**
 * The dashboard at /ui/ (docs/dashboard.md): static files only, every one served by this
 * server from this package and from npm packages (preact, htm, uPlot), through
 * @fastify/static: no CDN, no build step. The pages talk to the /v1 API with the token the
 * user gives (sessionStorage); the files themselves need none, and hold nothing secret.
 *
 * Every answer under /ui/ carries a strict Content-Security-Policy: scripts and styles only
 * from this origin, no inline script or style element, no eval, no frames, API calls only to
 * this origin. The pages render every value from a task as text (preact escapes), so a
 * payload such as <img src=x onerror=...> shows as text and runs nothing.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { addPageHeaders } from './page-headers.js';

const require = createRequire(import.meta.url);
/** A package's folder: up from its main file to its package.json (some export no ./package.json). */
function packageDir(name: string): string {
  let dir = dirname(require.resolve(name));
  while (!existsSync(join(dir, 'package.json')) || (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { name?: string }).name !== name) {
    const up = dirname(dir);
    if (up === dir) throw new Error(`the dashboard needs the package ${name}`);
    dir = up;
  }
  return dir;
}
/** The dashboard's own files: src/server/ui (dist/server/ui once built). */
const uiDir = join(dirname(fileURLToPath(import.meta.url)), '..', 'ui');

export interface UiOptions {
  /** Does the API need a token? The page asks for it before its first call when it does. */
  readonly auth: boolean;
  readonly version: string;
}

export const uiRoutes: FastifyPluginAsync<UiOptions> = async (app, { auth, version }) => {
  // The files hold nothing secret: every route of this plugin (the static ones included) is
  // public, and none is part of the API's OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: 'public' };
    route.schema = { ...route.schema, hide: true };
  });
  // Hooks of this plugin run for its routes only (fastify encapsulation).
  addPageHeaders(app);

  app.get('/ui', async (_request, reply) => reply.redirect('/ui/', 301));
  app.get('/ui/config.json', async () => ({ auth, version }));

  // preact/hooks imports the bare specifier "preact", which a browser without an import map
  // (an inline script, which the CSP forbids) cannot resolve: served with it pointed at our copy.
  const hooks = readFileSync(join(packageDir('preact'), 'hooks', 'dist', 'hooks.mjs'), 'utf8').replaceAll(/from\s*"preact"/g, 'from"./preact.mjs"');
  app.get('/ui/vendor/preact/hooks.mjs', async (_request, reply) => reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=3600').send(hooks));

  const vendors: [prefix: string, root: string][] = [
    ['/ui/vendor/preact/', join(packageDir('preact'), 'dist')],
    ['/ui/vendor/htm/', join(packageDir('htm'), 'dist')],
    ['/ui/vendor/uplot/', join(packageDir('uplot'), 'dist')],
  ];
  for (const [prefix, root] of vendors)
    await app.register(fastifyStatic, { root, prefix, decorateReply: false, index: false, maxAge: 3_600_000, allowedPath: (path) => /\.(mjs|js|css)$/.test(path) });
  await app.register(fastifyStatic, { root: uiDir, prefix: '/ui/', decorateReply: false, index: ['index.html'], cacheControl: false });
};
