/**
 * The API's contract, public like /healthz: GET /openapi.json (built from the routes:
 * openapi.ts) and a rendered reference at /docs/ (Swagger UI from the swagger-ui-dist
 * package, served from this server: no CDN). Its page loads only files of this origin,
 * under the dashboard's Content-Security-Policy (no inline script or style, no eval, API
 * calls to this origin only), so "Try it out" calls this server with the token typed in.
 */
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync } from 'fastify';
import { PUBLIC_ROUTE } from '../access.js';
import { buildOpenApi, type RouteRegistry } from '../openapi.js';
import { anyObjectSchema } from '../response-schemas.js';
import { apiRoute } from '../route-schema.js';
import { addPageHeaders } from './page-headers.js';

export interface DocsOptions {
  readonly version: string;
  /** The app's routes (filled while the app registers them). */
  readonly routes: RouteRegistry;
}

const INDEX_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>delayq API reference</title>
<link rel="stylesheet" href="assets/swagger-ui.css">
<link rel="icon" type="image/png" href="assets/favicon-32x32.png">
</head>
<body>
<div id="swagger-ui"></div>
<script src="assets/swagger-ui-bundle.js"></script>
<script src="init.js"></script>
</body>
</html>
`;

// No validator badge (it would call a third-party service); the document from this server.
// A POST must say JSON even with no body (pause, resume), or the server refuses it (415).
const INIT_JS = `window.ui = SwaggerUIBundle({
  url: '../openapi.json',
  dom_id: '#swagger-ui',
  deepLinking: true,
  validatorUrl: null,
  presets: [SwaggerUIBundle.presets.apis],
  layout: 'BaseLayout',
  requestInterceptor: (request) => {
    if (request.method === 'POST' && !Object.keys(request.headers).some((name) => name.toLowerCase() === 'content-type')) request.headers['Content-Type'] = 'application/json';
    return request;
  },
});
`;

const ASSETS = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']);
const hidden = { ...PUBLIC_ROUTE, schema: { hide: true } } as const;

export const docsRoutes: FastifyPluginAsync<DocsOptions> = async (app, { version, routes }) => {
  app.addHook('onRoute', (route) => {
    route.config = { ...route.config, access: 'public' };
  });
  addPageHeaders(app);

  // Built on first request: every route is registered by then.
  let document: object | null = null;
  app.get(
    '/openapi.json',
    { ...PUBLIC_ROUTE, schema: apiRoute({ operationId: 'getOpenApi', tags: ['system'], summary: 'This document (OpenAPI 3.0)', ok: { 200: anyObjectSchema } }) },
    async () => (document ??= buildOpenApi(version, routes)),
  );

  app.get('/docs', hidden, async (_request, reply) => reply.redirect('/docs/', 301));
  app.get('/docs/', hidden, async (_request, reply) => reply.type('text/html; charset=utf-8').send(INDEX_HTML));
  app.get('/docs/init.js', hidden, async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(INIT_JS));
  const root = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
  await app.register(fastifyStatic, { root, prefix: '/docs/assets/', decorateReply: false, index: false, maxAge: 3_600_000, allowedPath: (path) => ASSETS.has(path.replace(/^\//, '')) });
};
