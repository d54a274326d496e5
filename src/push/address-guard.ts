/**
 * Where a push may go (SSRF rules). A destination is allowed when an allowlist entry names
 * its address and port (allow-list.ts: local receivers in development and tests,
 * `--push-allow 127.0.0.1:8080,[::1]:9000`), or else when ipaddr.js classifies its address
 * as `unicast` (public). Everything else is refused with ipaddr.js's name for its range:
 * loopback, private, linkLocal (cloud metadata 169.254.169.254 included), carrierGradeNat,
 * unspecified (0.0.0.0, ::), multicast, broadcast, uniqueLocal (fc00::/7), reserved, 6to4,
 * teredo, rfc6052 (the local-use NAT64 prefix 64:ff9b:1::/48), rfc6145..., or
 * `ipv4Compatible` for ::/96, which ipaddr.js calls unicast.
 *
 * An IPv6 address that carries an IPv4 one a connection ends up at (IPv4-mapped
 * ::ffff:127.0.0.1, NAT64 64:ff9b::7f00:1) is judged as that IPv4 address, by the
 * allowlist and by the ranges alike; how each literal is read: ip-address.ts.
 *
 * The guard is applied twice: checkUrl, when a subscription is set (a literal host is judged
 * directly, a hostname by every address it resolves to), and by the transport on the address
 * each connection actually reached (src/push/transport.ts), which is what DNS rebinding and
 * literals in unusual spellings cannot get round.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { DelayQError } from '../core/errors.js';
import { allowListed, parseAllowList } from './allow-list.js';
import { embeddedIPv4, isIPv4Compatible, parseIp, type Address } from './ip-address.js';

export interface AddressGuard {
  /**
   * Why a connection to `address` on `port` may not be made ("refused destination 10.0.0.1:
   * private"), or null when it may.
   */
  refusal(address: string, port: number): string | null;
}

/** Every address a hostname resolves to (dns.lookup with all: true, as undici connects). */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

export const systemLookupAll: LookupAll = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/** The port a URL's scheme implies when it names none. */
export function portOf(protocol: string, port: string): number {
  return port !== '' ? Number(port) : protocol === 'https:' ? 443 : 80;
}

function rangeOf(address: Address): string {
  return isIPv4Compatible(address) ? 'ipv4Compatible' : address.range();
}

export function createAddressGuard(allow: string | readonly string[] = []): AddressGuard {
  const allowList = parseAllowList(allow);
  return {
    refusal(text, port) {
      // A zone id (fe80::1%eth0) names a link-local address: the range judges it.
      const given = parseIp(text);
      if (given === null) return `refused destination ${text}: not an IP address`;
      const carried = embeddedIPv4(given);
      const listed = allowListed(allowList, given, port);
      const listedCarried = carried === null ? false : allowListed(allowList, carried, port);
      if (listed === true || listedCarried === true) return null;
      const judged = carried ?? given;
      const range = rangeOf(judged);
      if (range === 'unicast') return null;
      const otherPorts = listed === 'port' || listedCarried === 'port' ? ` (allowlisted on other ports only, not ${port})` : '';
      return `refused destination ${judged.toString()}: ${range}${otherPorts}`;
    },
  };
}

/** The host of a URL without IPv6 brackets, and whether it is an IP literal (WHATWG URL has already canonicalised 2130706433, 0x7f.1...). */
function hostOf(url: URL): { readonly host: string; readonly literal: boolean } {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return { host, literal: isIP(host) !== 0 };
}

/**
 * Throws INVALID_URL (field `url`, the reason in the message) unless `url` is http or https,
 * carries no credentials, and its host is, or resolves only to, addresses the guard allows.
 */
export async function checkUrl(url: string, guard: AddressGuard, lookup: LookupAll = systemLookupAll): Promise<void> {
  const invalid = (why: string): DelayQError => new DelayQError('INVALID_URL', `url: ${why}`, { field: 'url' });
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid('not an absolute URL');
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw invalid(`only http and https are pushed to (got ${parsed.protocol})`);
  // Credentials in a URL end up in logs and stores; a receiver that needs them takes a header.
  if (parsed.username !== '' || parsed.password !== '') throw invalid('credentials in the URL are not accepted; use a header');
  const { host, literal } = hostOf(parsed);
  const port = portOf(parsed.protocol, parsed.port);
  let addresses: readonly string[];
  if (literal) addresses = [host];
  else {
    try {
      addresses = await lookup(host);
    } catch (error) {
      throw invalid(`cannot resolve ${host}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
    }
    if (addresses.length === 0) throw invalid(`${host} resolves to no address`);
  }
  for (const address of addresses) {
    const refusal = guard.refusal(address, port);
    if (refusal !== null) throw invalid(`${literal ? refusal : `${host}: ${refusal}`}; ${allowHint(address, port)}`);
  }
}

/** How to let push reach a refused address on purpose (a receiver on this machine or network). */
export function allowHint(address: string, port: number): string {
  const entry = address.includes(':') ? `[${address}]:${port}` : `${address}:${port}`;
  return `to push to it anyway, allow it with --push-allow / DELAYQ_PUSH_ALLOW (push.allow in the library), e.g. ${entry}`;
}
