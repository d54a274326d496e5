/**
 * URLs made safe for logs. A push URL may carry a token in its query (`?token=...`) or in
 * its userinfo (`https://user:pass@host`), and a store URL a password (`redis://:pw@host`):
 * logs keep the scheme, host and path, which say where, and never those parts.
 */

const REDACTED_USERINFO = '***@';
const REDACTED_TAIL = '?<redacted>';

/** A URL for a log field: its origin and path, and a mark where it had a query or fragment. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    const tail = parsed.search !== '' || parsed.hash !== '' ? REDACTED_TAIL : '';
    // `origin` is "null" for schemes it does not know (redis:, postgres:): rebuild it then.
    const origin = parsed.origin !== 'null' ? parsed.origin : `${parsed.protocol}//${parsed.host}`;
    return (parsed.username !== '' || parsed.password !== '' ? origin.replace('//', `//${REDACTED_USERINFO}`) : origin) + parsed.pathname + tail;
  } catch {
    return redactUrlsIn(url);
  }
}

// scheme://  [userinfo@]  host and path  [?query or #fragment]. The userinfo runs to the last
// @ before the path, so a password with an unescaped @ is still covered; the tail may hold
// < and >, so a text redacted twice (a message, then its log line) reads as once.
const URL_IN_TEXT = /\b([a-zA-Z][a-zA-Z0-9+.-]*:\/\/)([^\s"'<>\\/?#]*@)?([^\s"'<>\\?#]*)([?#][^\s"'\\]*)?/g;

/** Every URL in a text (a log line, an error message) without its userinfo, query and fragment. */
export function redactUrlsIn(text: string): string {
  if (!text.includes('://')) return text;
  return text.replace(URL_IN_TEXT, (_whole: string, scheme: string, userinfo: string | undefined, rest: string, tail: string | undefined) =>
    scheme + (userinfo === undefined ? '' : REDACTED_USERINFO) + rest + (tail === undefined ? '' : REDACTED_TAIL),
  );
}
