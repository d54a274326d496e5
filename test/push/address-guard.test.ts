import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { checkUrl, createAddressGuard, systemLookupAll, type LookupAll } from '../../src/push/address-guard.js';
import { parseAllowList } from '../../src/push/allow-list.js';
import { parseIp } from '../../src/push/ip-address.js';

const guard = createAddressGuard();
const noLookup: LookupAll = () => Promise.reject(new Error('a literal host is never looked up'));
const resolvesTo =
  (addresses: readonly string[]): LookupAll =>
  () =>
    Promise.resolve(addresses);

async function refusedWith(url: string, reason: RegExp, lookup: LookupAll = noLookup, by = guard): Promise<void> {
  await assert.rejects(checkUrl(url, by, lookup), (error: unknown) => {
    assert.ok(isDelayQError(error, 'INVALID_URL'), String(error));
    assert.equal(error.details?.['field'], 'url');
    assert.match(error.message, reason);
    return true;
  });
}

describe('the SSRF guard', () => {
  it('allows only what ipaddr.js calls unicast, judging an address that carries an IPv4 one (mapped, NAT64) as that IPv4', () => {
    const cases: Array<[string, string | null]> = [
      ['8.8.8.8', null],
      ['2606:4700:4700::1111', null],
      ['::ffff:8.8.8.8', null],
      ['64:ff9b::808:808', null],
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['::ffff:127.0.0.1', 'loopback'],
      ['64:ff9b::7f00:1', 'loopback'],
      ['64:ff9b::127.0.0.1', 'loopback'],
      ['64:ff9b::a9fe:a9fe', 'linkLocal'],
      ['64:ff9b::10.0.0.1', 'private'],
      ['::ffff:10.0.0.1', 'private'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['fe80::1', 'linkLocal'],
      ['fe80::1%lo', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['fd00:ec2::254', 'uniqueLocal'],
      ['fc00::1', 'uniqueLocal'],
      ['64:ff9b:1::7f00:1', 'rfc6052'],
      ['64:ff9b:1::808:808', 'rfc6052'],
      ['::ffff:0:7f00:1', 'rfc6145'],
      ['2002:7f00:1::', '6to4'],
      ['2002:808:808::', '6to4'],
      ['2001::1', 'teredo'],
      ['localhost', 'not an IP address'],
    ];
    for (const [address, range] of cases) {
      const refusal = guard.refusal(address, 443);
      if (range === null) assert.equal(refusal, null, address);
      else assert.match(refusal ?? 'allowed', new RegExp(`^refused destination .*: ${range}$`), address);
    }
  });

  it('refuses IPv4-compatible addresses (::/96), however they are spelt, whatever IPv4 they carry', () => {
    for (const address of ['::7f00:1', '::127.0.0.1', '0:0:0:0:0:0:127.0.0.1', '::0:7f00:1', '::a00:1', '::8.8.8.8', '::2'])
      assert.match(guard.refusal(address, 80) ?? 'allowed', /: ipv4Compatible$/, address);
    // ipaddr.js alone would read ::127.0.0.1 as the IPv4-mapped ::ffff:7f00:1.
    assert.equal(parseIp('::127.0.0.1')?.toString(), '::7f00:1');
    assert.equal(parseIp('::ffff:127.0.0.1')?.toString(), '::ffff:7f00:1');
  });

  it('lets an allowlisted address or CIDR through, and nothing next to it', () => {
    const local = createAddressGuard('127.0.0.1/32, ::1/128');
    assert.equal(local.refusal('127.0.0.1', 80), null);
    assert.equal(local.refusal('::1', 80), null);
    assert.equal(local.refusal('::ffff:127.0.0.1', 80), null);
    assert.equal(local.refusal('64:ff9b::7f00:1', 80), null);
    assert.match(local.refusal('::7f00:1', 80) ?? '', /ipv4Compatible/);
    assert.match(local.refusal('127.0.0.2', 80) ?? '', /loopback/);
    assert.match(local.refusal('10.0.0.1', 80) ?? '', /private/);
    assert.equal(createAddressGuard(['10.1.0.0/16']).refusal('10.1.200.3', 443), null);
    const bare = createAddressGuard('127.0.0.1,::1');
    assert.equal(bare.refusal('127.0.0.1', 1), null);
    assert.match(bare.refusal('127.0.0.2', 1) ?? '', /loopback/);
    assert.equal(bare.refusal('::1', 65_535), null);
  });

  it('an allowlist entry with a port lets only that port through', () => {
    const ported = createAddressGuard('127.0.0.1:8080, [::1]:9000, 10.0.0.0/8:443, [fd00::/8]:8443');
    assert.equal(ported.refusal('127.0.0.1', 8080), null);
    assert.equal(ported.refusal('::ffff:127.0.0.1', 8080), null);
    assert.equal(ported.refusal('::1', 9000), null);
    assert.equal(ported.refusal('10.20.30.40', 443), null);
    assert.equal(ported.refusal('fd12::1', 8443), null);
    assert.equal(ported.refusal('127.0.0.1', 8081), 'refused destination 127.0.0.1: loopback (allowlisted on other ports only, not 8081)');
    assert.equal(ported.refusal('::1', 8080), 'refused destination ::1: loopback (allowlisted on other ports only, not 8080)');
    assert.match(ported.refusal('10.20.30.40', 80) ?? '', /private \(allowlisted on other ports only, not 80\)$/);
    assert.match(ported.refusal('127.0.0.2', 8080) ?? '', /: loopback$/);
    // Another entry naming the same address for any port wins.
    assert.equal(createAddressGuard('127.0.0.1:8080,127.0.0.0/8').refusal('127.0.0.1', 9), null);
  });

  it('reads allowlist entries with and without ports', () => {
    assert.deepEqual(parseAllowList(''), []);
    const read = parseAllowList('127.0.0.1, 10.0.0.0/8:443, ::1/128, [::1]:9000, [fd00::/8]:1, 127.0.0.1:65535').map((e) => [e.network[0].toString(), e.network[1], e.port]);
    assert.deepEqual(read, [
      ['127.0.0.1', 32, null],
      ['10.0.0.0', 8, 443],
      ['::1', 128, null],
      ['::1', 128, 9000],
      ['fd00::', 8, 1],
      ['127.0.0.1', 32, 65_535],
    ]);
  });

  it('refuses a malformed allowlist entry as INVALID_OPTION, with the reason', () => {
    const cases: Array<[string, RegExp]> = [
      ['10.0.0.0/33', /prefix length must be 0 to 32/],
      ['::1/129', /prefix length must be 0 to 128/],
      ['10.0.0.0/', /prefix length/],
      ['localhost/8', /"localhost" is not an IP address \(hostnames are not accepted\)/],
      ['localhost:8080', /"localhost" is not an IP address/],
      ['127.0.0.1:', /a : with no port after it/],
      ['127.0.0.1:0', /port must be 1 to 65535 \(got "0"\)/],
      ['127.0.0.1:65536', /port must be 1 to 65535/],
      ['127.0.0.1:http', /port must be 1 to 65535/],
      ['[::1', /a \[ without its \]/],
      ['::1]:9000', /a \] without its \[/],
      ['[::1]9000', /only :<port> may follow the \]/],
      ['[fd00::]/8:443', /inside the brackets/],
      ['[127.0.0.1]:80', /brackets are for IPv6/],
      ['[::1]:', /a : with no port/],
      ['fe80::1%eth0', /zone ids/],
      [':8080', /no address/],
    ];
    for (const [bad, reason] of cases)
      assert.throws(
        () => parseAllowList(bad),
        (error: unknown) => {
          assert.ok(isDelayQError(error, 'INVALID_OPTION'), String(error));
          assert.equal(error.details?.['field'], 'pushAllow');
          assert.ok(error.message.includes(`"${bad}"`), error.message);
          assert.match(error.message, reason);
          return true;
        },
        bad,
      );
  });
});

describe('checkUrl', () => {
  it('refuses literal hosts the guard refuses, in the spellings WHATWG URL canonicalises', async () => {
    await refusedWith('http://127.0.0.1:8080/hook', /127\.0\.0\.1: loopback/);
    await refusedWith('http://10.0.0.1/', /10\.0\.0\.1: private/);
    await refusedWith('http://169.254.169.254/latest/meta-data/', /linkLocal/);
    await refusedWith('http://[::1]:9000/', /::1: loopback/);
    await refusedWith('http://[::ffff:127.0.0.1]/', /127\.0\.0\.1: loopback/);
    await refusedWith('http://[::7f00:1]/', /::7f00:1: ipv4Compatible/);
    await refusedWith('http://[::127.0.0.1]:8080/', /::7f00:1: ipv4Compatible/);
    await refusedWith('http://[64:ff9b::7f00:1]/', /127\.0\.0\.1: loopback/);
    await refusedWith('http://0.0.0.0:3000/', /unspecified/);
    await refusedWith('http://0/', /0\.0\.0\.0: unspecified/);
    await refusedWith('http://2130706433/', /127\.0\.0\.1: loopback/);
    await refusedWith('http://0x7f.1/', /127\.0\.0\.1: loopback/);
    await refusedWith('http://017700000001/', /127\.0\.0\.1: loopback/);
    await refusedWith('https://100.64.0.1/', /carrierGradeNat/);
  });

  it('refuses a hostname if any address it resolves to is refused', async () => {
    await refusedWith('http://localhost:8080/', /localhost: refused destination (127\.0\.0\.1|::1): loopback/, systemLookupAll);
    await refusedWith('https://hooks.example/', /hooks\.example: refused destination 10\.0\.0\.7: private/, resolvesTo(['93.184.216.34', '10.0.0.7']));
    await refusedWith('https://hooks.example/', /resolves to no address/, resolvesTo([]));
    await refusedWith('https://nowhere.invalid/', /cannot resolve nowhere\.invalid/, () => Promise.reject(Object.assign(new Error('x'), { code: 'ENOTFOUND' })));
  });

  it('refuses other schemes, relative URLs and credentials', async () => {
    await refusedWith('ftp://93.184.216.34/', /only http and https/);
    await refusedWith('file:///etc/passwd', /only http and https/);
    await refusedWith('/relative', /not an absolute URL/);
    await refusedWith('https://user:pass@93.184.216.34/', /credentials/);
  });

  it('accepts public destinations, and allowlisted local ones', async () => {
    await checkUrl('https://93.184.216.34/hook', guard, noLookup);
    await checkUrl('http://[2606:4700:4700::1111]:8080/', guard, noLookup);
    await checkUrl('https://hooks.example/x?y=1', guard, resolvesTo(['93.184.216.34', '2606:4700:4700::1111']));
    const local = createAddressGuard('127.0.0.1/32,::1/128');
    await checkUrl('http://127.0.0.1:1234/', local, noLookup);
    await checkUrl('http://[::1]:1234/', local, noLookup);
    await checkUrl('http://localhost:1234/', local);
    await checkUrl('http://[64:ff9b::808:808]/', guard, noLookup);
  });

  it("judges the URL's port against allowlist entries with a port, the scheme's default when it names none", async () => {
    const ported = createAddressGuard('127.0.0.1:8080,127.0.0.1:443,[::1]:80');
    await checkUrl('http://127.0.0.1:8080/hook', ported, noLookup);
    await checkUrl('https://127.0.0.1/hook', ported, noLookup);
    await checkUrl('http://[::1]/hook', ported, noLookup);
    await refusedWith('http://127.0.0.1:9000/', /127\.0\.0\.1: loopback \(allowlisted on other ports only, not 9000\)/, noLookup, ported);
    await refusedWith('http://127.0.0.1/', /not 80\)/, noLookup, ported);
    await refusedWith('https://[::1]/', /::1: loopback \(allowlisted on other ports only, not 443\)/, noLookup, ported);
    await refusedWith('http://hooks.example:9000/', /hooks\.example: refused destination 127\.0\.0\.1: loopback \(allowlisted/, resolvesTo(['127.0.0.1']), ported);
  });
});
