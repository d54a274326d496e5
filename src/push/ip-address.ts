/**
 * IP literals as the SSRF rules read them, and the IPv4 address an IPv6 one carries.
 *
 * ipaddr.js reads `::a.b.c.d` as the IPv4-mapped `::ffff:a.b.c.d`, but RFC 4291 (and the
 * WHATWG URL parser, and the kernel) read it as the IPv4-compatible `::a.b.c.d`, i.e.
 * `::7f00:1` for `::127.0.0.1`. So a dotted tail is rewritten in hex before ipaddr.js
 * parses the text: the guard must judge the address a connection would reach, not the
 * one ipaddr.js guesses.
 *
 * Embedded IPv4 addresses, by prefix:
 *   ::ffff:0:0/96    IPv4-mapped            the IPv4 address itself (a dual-stack socket)
 *   64:ff9b::/96     NAT64, well-known      the IPv4 address the NAT64 gateway forwards to
 *   ::/96            IPv4-compatible        deprecated (RFC 4291); see isIPv4Compatible
 * Other prefixes that carry an IPv4 address (6to4 2002::/16, Teredo 2001::/32, local-use
 * NAT64 64:ff9b:1::/48, SIIT ::ffff:0:0:0/96) are not unwrapped: ipaddr.js names their
 * range and the guard refuses them whole.
 */
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

export type Address = ipaddr.IPv4 | ipaddr.IPv6;

const DOTTED_TAIL = /^(.*:)(\d+)\.(\d+)\.(\d+)\.(\d+)$/;

/** `text` as an address (an IPv6 zone id dropped: ranges do not depend on it), or null when it is not an IP literal. */
export function parseIp(text: string): Address | null {
  const version = isIP(text);
  if (version === 4) return ipaddr.IPv4.parse(text);
  if (version !== 6) return null;
  const bare = text.split('%', 1)[0] ?? text;
  const dotted = DOTTED_TAIL.exec(bare);
  const hex = dotted === null ? bare : `${dotted[1]}${group(dotted[2], dotted[3])}:${group(dotted[4], dotted[5])}`;
  return ipaddr.IPv6.parse(hex);
}

function group(high: string | undefined, low: string | undefined): string {
  return ((Number(high) << 8) | Number(low)).toString(16);
}

/** The IPv4 address an IPv4-mapped or NAT64 (64:ff9b::/96) address forwards to, else null. */
export function embeddedIPv4(address: Address): ipaddr.IPv4 | null {
  if (address.kind() !== 'ipv4') {
    const v6 = address as ipaddr.IPv6;
    if (v6.isIPv4MappedAddress() || v6.match(NAT64)) return lastFourBytes(v6);
  }
  return null;
}

const NAT64: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('64:ff9b::'), 96];
const COMPATIBLE: [ipaddr.IPv6, number] = [ipaddr.IPv6.parse('::'), 96];

/**
 * An IPv4-compatible address (`::a.b.c.d`, ::/96 but for :: and ::1, which ipaddr.js names
 * unspecified and loopback): deprecated since 2006, unused on the Internet, and some
 * systems still route it to the IPv4 address (`::7f00:1` reaching 127.0.0.1).
 */
export function isIPv4Compatible(address: Address): boolean {
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).match(COMPATIBLE) && (address as ipaddr.IPv6).range() === 'unicast';
}

function lastFourBytes(address: ipaddr.IPv6): ipaddr.IPv4 {
  const bytes = address.toByteArray();
  return new ipaddr.IPv4(bytes.slice(12));
}
