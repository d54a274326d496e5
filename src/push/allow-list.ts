/**
 * The SSRF allowlist (`--push-allow`, DELAYQ_PUSH_ALLOW, the library's `push.allow`): the
 * destinations push may reach although the rules of address-guard.ts refuse them. Each
 * entry is an address or a CIDR, with or without a port:
 *
 *   127.0.0.1          one IPv4 address, any port        (a bare address is a /32 or /128)
 *   10.0.0.0/8         a range, any port
 *   127.0.0.1:8080     one address, port 8080 only
 *   10.0.0.0/8:443     a range, port 443 only
 *   ::1, fd00::/8      IPv6, any port                     (no brackets needed without a port)
 *   [::1]:9000         IPv6, port 9000 only               (brackets around the address or CIDR,
 *   [fd00::/8]:443     a range, port 443 only              as in a URL, then :port)
 *
 * An entry that is none of these is INVALID_OPTION (field `pushAllow`) with the reason.
 * Unbracketed text with two colons or more is read as an IPv6 address, so `::1:9000` is
 * the address ::1:9000 (any port), not ::1 on port 9000.
 */
import { isIP } from 'node:net';
import { DelayQError } from '../core/errors.js';
import { parseIp, type Address } from './ip-address.js';

export interface AllowEntry {
  /** The entry as written. */
  readonly text: string;
  readonly network: readonly [Address, number];
  /** The one port allowed; null: any. */
  readonly port: number | null;
}

const EXAMPLES = '127.0.0.1, 10.0.0.0/8, 127.0.0.1:8080, 10.0.0.0/8:443, ::1/128, [::1]:9000 or [fd00::/8]:443';

/** The allowlist from `127.0.0.1:8080,[::1]:9000` (or a list of such strings); empty text: an empty list. */
export function parseAllowList(entries: string | readonly string[]): readonly AllowEntry[] {
  const texts = (typeof entries === 'string' ? entries.split(',') : entries).map((text) => text.trim()).filter((text) => text.length > 0);
  return texts.map(parseEntry);
}

/** Whether an entry lets `address` through on `port`: `'port'` when one names the address for other ports only. */
export function allowListed(list: readonly AllowEntry[], address: Address, port: number): boolean | 'port' {
  let otherPort = false;
  for (const entry of list) {
    if (address.kind() !== entry.network[0].kind() || !address.match(entry.network as [Address, number])) continue;
    if (entry.port === null || entry.port === port) return true;
    otherPort = true;
  }
  return otherPort ? 'port' : false;
}

function parseEntry(text: string): AllowEntry {
  const invalid = (why: string): DelayQError =>
    new DelayQError('INVALID_OPTION', `pushAllow: "${text}" is not an allowlist entry: ${why} (expected an address or CIDR with an optional port: ${EXAMPLES})`, { field: 'pushAllow' });
  let network = text;
  let portText: string | null = null;
  if (text.startsWith('[')) {
    const close = text.indexOf(']');
    if (close < 0) throw invalid('a [ without its ]');
    network = text.slice(1, close);
    const rest = text.slice(close + 1);
    if (rest.startsWith('/')) throw invalid('the prefix length goes inside the brackets, as in [fd00::/8]:443');
    if (rest !== '') {
      if (!rest.startsWith(':')) throw invalid('only :<port> may follow the ]');
      portText = rest.slice(1);
    }
    if (isIP(network.split('/', 1)[0] ?? '') !== 6) throw invalid('brackets are for IPv6 addresses');
  } else if (text.split(':').length === 2) {
    // One colon: an IPv4 address or CIDR and a port (IPv6 has two colons or more).
    [network, portText] = text.split(':') as [string, string];
  } else if (text.includes(']')) {
    throw invalid('a ] without its [');
  }
  const slash = network.indexOf('/');
  const addressText = slash < 0 ? network : network.slice(0, slash);
  const address = parseIp(addressText);
  if (addressText.includes('%')) throw invalid('zone ids (%eth0) are not accepted');
  if (address === null) throw invalid(`${addressText === '' ? 'no address' : `"${addressText}" is not an IP address`} (hostnames are not accepted)`);
  const bits = address.kind() === 'ipv4' ? 32 : 128;
  let prefix = bits;
  if (slash >= 0) {
    const prefixText = network.slice(slash + 1);
    prefix = /^\d{1,3}$/.test(prefixText) ? Number(prefixText) : Number.NaN;
    if (!(prefix <= bits)) throw invalid(`the prefix length must be 0 to ${bits} (got "${prefixText}")`);
  }
  let port: number | null = null;
  if (portText !== null) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : Number.NaN;
    if (!(port >= 1 && port <= 65_535)) throw invalid(portText === '' ? 'a : with no port after it' : `the port must be 1 to 65535 (got "${portText}")`);
  }
  return { text, network: [address, prefix], port };
}
