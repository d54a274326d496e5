/**
 * Who may call a route, decided by the route the request matched and never by the text of
 * its target: the router decodes percent-escapes and accepts absolute-form targets, so any
 * test of `request.url` (`/%761/stats`, `http://x/v1/stats`) misjudges what will run.
 *
 * Every route needs the token unless it says otherwise in its config (`access`), so a route
 * added without a thought is guarded; so does a request that matches no route (its 404 would
 * tell a stranger which routes exist).
 *
 * Cross-site requests: a page on another origin can make a browser send a "simple" request
 * (a POST with no body or a text/plain one) without asking first, and a server without a
 * token has nothing else to tell it from the user's own. So a request that can change state
 * is refused when the browser says it comes from another site (`Sec-Fetch-Site`) or from
 * another origin (`Origin`), and a POST must say `Content-Type: application/json`, which no
 * page can send to another origin without a preflight this server never grants.
 */
import type { FastifyRequest } from 'fastify';
import { HttpError } from './errors.js';

/**
 * - `token` (the default): needs the token when the server has one;
 * - `metrics`: as `token`, unless the server serves its metrics publicly;
 * - `public`: never needs it (health, the OpenAPI document, the dashboard's static files).
 */
export type RouteAccess = 'token' | 'metrics' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: RouteAccess;
  }
}

/** Route options that make a route public. */
export const PUBLIC_ROUTE = { config: { access: 'public' } } as const;

export interface AccessRules {
  /** Checks an Authorization header, throwing UNAUTHORIZED; null when the server has no token. */
  readonly checkToken: ((authorization: string | undefined) => void) | null;
  readonly metricsPublic: boolean;
}

/** Throws UNAUTHORIZED when the matched route needs the token and the request lacks it. */
export function checkAccess(request: FastifyRequest, rules: AccessRules): void {
  if (rules.checkToken === null) return;
  const access = request.routeOptions.config.access ?? 'token';
  if (access === 'public' || (access === 'metrics' && rules.metricsPublic)) return;
  rules.checkToken(request.headers.authorization);
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Throws CROSS_ORIGIN_REFUSED for a state-changing request from another origin, and
 * UNSUPPORTED_MEDIA_TYPE for a POST that is not declared JSON.
 */
export function checkSameOrigin(request: FastifyRequest): void {
  if (SAFE_METHODS.has(request.method)) return;
  const { headers } = request;
  const refusal = crossOriginReason(headers['sec-fetch-site'], headers.origin, forwardedHost(headers['x-forwarded-host']) ?? headers.host);
  if (refusal !== null)
    throw new HttpError('CROSS_ORIGIN_REFUSED', `${refusal}: ${request.method} from another origin is refused; call the API from the server side or from this origin`);
  if (request.method === 'POST' && !isJson(headers['content-type']))
    throw new HttpError('UNSUPPORTED_MEDIA_TYPE', 'content-type: a POST must send Content-Type: application/json, even with no body');
}

/** Why the request comes from another origin, or null when nothing says it does. */
export function crossOriginReason(fetchSite: string | string[] | undefined, origin: string | undefined, host: string | undefined): string | null {
  // Browsers that send Sec-Fetch-Site say exactly what we need; it cannot be set by a page.
  if (typeof fetchSite === 'string') return fetchSite === 'same-origin' || fetchSite === 'none' ? null : `sec-fetch-site: ${fetchSite}`;
  if (origin === undefined) return null;
  // Sent by sandboxed frames, file: pages and some redirects: nothing to compare, so no.
  if (origin === 'null') return 'origin: null';
  let originHost: string;
  try {
    originHost = new URL(origin).host;
  } catch {
    return 'origin: not a URL';
  }
  return host !== undefined && originHost.toLowerCase() === host.toLowerCase() ? null : `origin: ${origin}`;
}

/**
 * The host the client asked for behind a reverse proxy. A browser cannot set this header
 * on a request to another origin without a preflight, so a page cannot use it to pass.
 */
function forwardedHost(value: string | string[] | undefined): string | undefined {
  const first = Array.isArray(value) ? value[0] : value;
  return first?.split(',')[0]?.trim() || undefined;
}

function isJson(contentType: string | undefined): boolean {
  if (contentType === undefined) return false;
  const type = contentType.split(';')[0]?.trim().toLowerCase();
  return type === 'application/json';
}
