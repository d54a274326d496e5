import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { checkUrl, createAddressGuard, parseAllowList, systemLookupAll, type LookupAll } from '../../src/push/address-guard.js';

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
  it('allows only what ipaddr.js calls unicast, judging an IPv4-mapped IPv6 address as its IPv4', () => {
    const cases: Array<[string, string | null]> = [
      ['8.8.8.8', null],
      ['2606:4700:4700::1111', null],
      ['::ffff:8.8.8.8', null],
      ['127.0.0.1', 'loopback'],
      ['::1', 'loopback'],
      ['::ffff:7f00:1', 'loopback'],
      ['10.0.0.1', 'private'],
      ['172.16.5.4', 'private'],
      ['192.168.1.1', 'private'],
      ['169.254.169.254', 'linkLocal'],
      ['fe80::1', 'linkLocal'],
      ['100.64.0.1', 'carrierGradeNat'],
      ['0.0.0.0', 'unspecified'],
      ['::', 'unspecified'],
      ['224.0.0.1', 'multicast'],
      ['ff02::1', 'multicast'],
      ['255.255.255.255', 'broadcast'],
      ['fd00:ec2::254', 'uniqueLocal'],
      ['fc00::1', 'uniqueLocal'],
      ['64:ff9b::7f00:1', 'rfc6052'],
      ['2002:7f00:1::', '6to4'],
      ['localhost', 'not an IP address'],
    ];
    for (const [address, range] of cases) {
      const refusal = guard.refusal(address);
      if (range === null) assert.equal(refusal, null, address);
      else assert.match(refusal ?? 'allowed', new RegExp(`^refused destination .*: ${range}$`), address);
    }
  });

  it('lets an allowlisted CIDR through, and nothing next to it', () => {
    const local = createAddressGuard('127.0.0.1/32, ::1/128');
    assert.equal(local.refusal('127.0.0.1'), null);
    assert.equal(local.refusal('::1'), null);
    assert.equal(local.refusal('::ffff:127.0.0.1'), null);
    assert.match(local.refusal('127.0.0.2') ?? '', /loopback/);
    assert.match(local.refusal('10.0.0.1') ?? '', /private/);
    assert.equal(createAddressGuard(['10.1.0.0/16']).refusal('10.1.200.3'), null);
  });

  it('refuses a malformed CIDR as INVALID_OPTION', () => {
    assert.deepEqual(parseAllowList(''), []);
    for (const bad of ['127.0.0.1', '10.0.0.0/33', 'localhost/8', '::1/129'])
      assert.throws(() => parseAllowList(bad), (error: unknown) => isDelayQError(error, 'INVALID_OPTION') && error.message.includes(bad), bad);
  });
});

describe('checkUrl', () => {
  it('refuses literal hosts the guard refuses, in the spellings WHATWG URL canonicalises', async () => {
    await refusedWith('http://127.0.0.1:8080/hook', /127\.0\.0\.1: loopback/);
    await refusedWith('http://10.0.0.1/', /10\.0\.0\.1: private/);
    await refusedWith('http://169.254.169.254/latest/meta-data/', /linkLocal/);
    await refusedWith('http://[::1]:9000/', /::1: loopback/);
    await refusedWith('http://[::ffff:127.0.0.1]/', /127\.0\.0\.1: loopback/);
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
  });
});
