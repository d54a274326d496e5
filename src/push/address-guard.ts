/**
 * Where a push may go (SSRF rules). A destination address is allowed when ipaddr.js
 * classifies it as `unicast` (public), or when it lies inside an allowlisted CIDR (local
 * receivers in development and tests: `--push-allow 127.0.0.1/32,::1/128`). Everything else
 * is refused with ipaddr.js's name for its range: loopback, private, linkLocal (cloud
 * metadata 169.254.169.254 included), carrierGradeNat, unspecified (0.0.0.0, ::), multicast,
 * broadcast, uniqueLocal (fc00::/7), reserved, 6to4, teredo, rfc6052...
 *
 * An IPv4-mapped IPv6 address (::ffff:127.0.0.1) is judged as the IPv4 it carries.
 *
 * The guard is applied twice: checkUrl, when a subscription is set (a literal host is judged
 * directly, a hostname by every address it resolves to), and by the transport on the address
 * each connection actually reached (src/push/transport.ts), which is what DNS rebinding and
 * literals in unusual spellings cannot get round.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { DelayQError } from '../core/errors.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;
type Cidr = [Address, number];

export interface AddressGuard {
  /** Why `address` may not be connected to ("refused destination 10.0.0.1: private"), or null when it may. */
  refusal(address: string): string | null;
}

/** Every address a hostname resolves to (dns.lookup with all: true, as undici connects). */
export type LookupAll = (hostname: string) => Promise<readonly string[]>;

export const systemLookupAll: LookupAll = async (hostname) => (await dnsLookup(hostname, { all: true, verbatim: true })).map((entry) => entry.address);

/**
 * The allowlist from `127.0.0.1/32,::1/128` (or a list of such strings); an empty text is
 * an empty list. A CIDR ipaddr.js cannot parse is INVALID_OPTION (field `pushAllow`).
 */
export function parseAllowList(cidrs: string | readonly string[]): readonly Cidr[] {
  const texts = (typeof cidrs === 'string' ? cidrs.split(',') : cidrs).map((text) => text.trim()).filter((text) => text.length > 0);
  return texts.map((text) => {
    try {
      return ipaddr.parseCIDR(text);
    } catch {
      throw new DelayQError('INVALID_OPTION', `pushAllow: "${text}" is not a CIDR (e.g. 127.0.0.1/32 or ::1/128)`, { field: 'pushAllow' });
    }
  });
}

/** The IPv4 inside an IPv4-mapped IPv6 address, or the address itself. */
function unmapped(address: Address): Address {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

function inside(address: Address, cidr: Cidr): boolean {
  return address.kind() === cidr[0].kind() && address.match(cidr);
}

export function createAddressGuard(allow: string | readonly string[] = []): AddressGuard {
  const allowList = parseAllowList(allow);
  return {
    refusal(text) {
      // A zone id (fe80::1%eth0) names a link-local address; ipaddr.js parses it, range() judges it.
      if (isIP(text) === 0) return `refused destination ${text}: not an IP address`;
      const given = ipaddr.parse(text);
      const address = unmapped(given);
      if (allowList.some((cidr) => inside(given, cidr) || inside(address, cidr))) return null;
      const range = address.range();
      return range === 'unicast' ? null : `refused destination ${address.toString()}: ${range}`;
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
    const refusal = guard.refusal(address);
    if (refusal !== null) throw invalid(literal ? refusal : `${host}: ${refusal}`);
  }
}
