/**
 * The headers of every page this server renders (the dashboard at /ui/, the API reference
 * at /docs/): a strict Content-Security-Policy (scripts and styles only from this origin, no
 * inline script or style element, no eval, no frames, API calls only to this origin), no
 * MIME sniffing, no referrer, no framing.
 */
import type { FastifyInstance } from 'fastify';

export const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** Sets the page headers on every answer of the plugin `app` (hooks are encapsulated: its routes only). */
export function addPageHeaders(app: FastifyInstance): void {
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.header('content-security-policy', PAGE_CSP);
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    done(null, payload);
  });
}
