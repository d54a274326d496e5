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
 *
 * DNS rebinding: a page of rebind.attacker.example whose name the attacker then points at
 * this server is, for the browser, of this server's own origin, so Origin and Sec-Fetch-Site
 * say nothing. What it cannot change is the name in Host. So a server without a token answers
 * its guarded routes only for Host names that name it as loopback (`localhost`, 127.0.0.0/8,
 * `[::1]`) or that its operator gave (`--allow-host`: its name behind a proxy, or its own
 * address), and only when X-Forwarded-Host, if a proxy sent one, names one of them too; any
 * other is 421 HOST_NOT_ALLOWED. With a token the token decides, and Host is not checked. The
 * public routes (probes, the OpenAPI document, the dashboard's files, /metrics with
 * --metrics-public) answer any Host: they say nothing a token would guard, and kubelet probes
 * send the pod's address.
 */
import type { FastifyRequest } from 'fastify';
import { isLoopback } from './config.js';
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
  /** Without a token: the Host names answered besides loopback ones (hostNameOf form). */
  readonly allowedHosts: ReadonlySet<string>;
}

/**
 * Throws UNAUTHORIZED when the matched route needs the token and the request lacks it, and,
 * on a server without a token, HOST_NOT_ALLOWED when it names a host this server is not.
 */
export function checkAccess(request: FastifyRequest, rules: AccessRules): void {
  const access = request.routeOptions.config.access ?? 'token';
  if (access === 'public' || (access === 'metrics' && rules.metricsPublic)) return;
  if (rules.checkToken !== null) return rules.checkToken(request.headers.authorization);
  const { host } = request.headers;
  const forwarded = request.headers['x-forwarded-host'];
  const named = [host ?? '', ...(forwarded === undefined ? [] : (Array.isArray(forwarded) ? forwarded : [forwarded]).flatMap((value) => value.split(',')))];
  for (const name of named) {
    const hostName = hostNameOf(name);
    if (!isLoopback(hostName) && !rules.allowedHosts.has(hostName))
      throw new HttpError(
        'HOST_NOT_ALLOWED',
        `host: this server has no token and answers only for localhost, 127.0.0.1 and [::1]${rules.allowedHosts.size > 0 ? ` and ${[...rules.allowedHosts].join(', ')}` : ''} (got ${JSON.stringify(name.trim().slice(0, 100))}); give its name with --allow-host, or set a token`,
      );
  }
}

/**
 * The host name a Host header (or an --allow-host entry) names: lower case, without the
 * port or a trailing dot; an IPv6 address keeps its brackets ("[::1]:7420" -> "[::1]").
 */
export function hostNameOf(value: string): string {
  const host = value.trim().toLowerCase();
  // A name or a bracketed IPv6 address, then at most a port of digits; anything else is kept whole (and matches nothing).
  const match = /^(\[[0-9a-f:.]+\]|[^:[\]@/\\]*)(?::[0-9]*)?$/.exec(host);
  if (match === null) return host;
  const name = match[1]!;
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

/** A request that says no host: HTTP/1.1 requires Host (RFC 9112), which Node enforced with an empty 400; answered in the envelope. */
export function checkHostGiven(request: FastifyRequest): void {
  if (request.headers.host === undefined && request.raw.httpVersionMajor === 1 && request.raw.httpVersionMinor >= 1)
    throw new HttpError('BAD_REQUEST', 'host: an HTTP/1.1 request must send a Host header');
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
