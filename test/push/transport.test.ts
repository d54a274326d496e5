/**
 * The undici PushTransport against real receivers on loopback: local destinations are
 * allowlisted (LOCAL) except in the SSRF tests, which show the same receivers refused.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { buildConnector } from 'undici';
import { Webhook } from 'standardwebhooks';
import { isDelayQError } from '../../src/core/errors.js';
import { PUSH_ERROR_BODY_BYTES, type PushRequest, type PushResponse } from '../../src/core/push.js';
import { createAddressGuard } from '../../src/push/address-guard.js';
import { generateSecret, signedHeaders } from '../../src/push/signature.js';
import { createPushTransport, parseRetryAfter, refuseConnected, RefusedDestinationError, type UndiciPushTransport } from '../../src/push/transport.js';
import { answerWith, closedPort, startReceiver, type Receiver } from './receiver.js';

const LOCAL = '127.0.0.1/32,::1/128';
const push = (url: string, extra: Partial<PushRequest> = {}): PushRequest => ({ url, body: '{"n":1}', headers: {}, timeoutMs: 5_000, ...extra });

function responseOf(result: PushResponse): Extract<PushResponse, { kind: 'response' }> {
  assert.equal(result.kind, 'response', JSON.stringify(result));
  return result;
}

function failureOf(result: PushResponse): string {
  assert.equal(result.kind, 'failure', JSON.stringify(result));
  return (result).reason;
}

describe('the push transport', () => {
  let receiver: Receiver;
  let transport: UndiciPushTransport;
  before(async () => {
    receiver = await startReceiver();
    transport = createPushTransport({ allow: LOCAL });
  });
  after(async () => {
    await transport.close();
    await receiver.close();
  });

  it('POSTs the body and headers; a signed push verifies at the receiver; a 2xx comes back as the response', async () => {
    receiver.answer = answerWith(204);
    const secret = generateSecret();
    const body = JSON.stringify({ order: 7 });
    const headers = { ...signedHeaders({ id: 'task-7', timestampSeconds: Math.floor(Date.now() / 1000), body, secrets: [secret] }), 'x-extra': 'yes' };
    const result = await transport.send(push(receiver.url, { body, headers }));
    assert.deepEqual(result, { kind: 'response', status: 204, retryAfterMs: null, bodyStart: '' });
    const got = receiver.received.at(-1)!;
    assert.equal(got.method, 'POST');
    assert.equal(got.url, '/hook');
    assert.equal(got.body, body);
    assert.equal(got.headers['content-type'], 'application/json');
    assert.equal(got.headers['x-extra'], 'yes');
    const asReceived = Object.fromEntries(Object.entries(got.headers).map(([name, value]) => [name, String(value)]));
    assert.deepEqual(new Webhook(secret).verify(got.body, asReceived), { order: 7 });
  });

  it('a 500 with Retry-After in seconds: status, body start and the delay', async () => {
    receiver.answer = answerWith(500, 'boom', { 'retry-after': '120' });
    assert.deepEqual(await transport.send(push(receiver.url)), { kind: 'response', status: 500, retryAfterMs: 120_000, bodyStart: 'boom' });
  });

  it('a 429 with Retry-After as an HTTP date: the delay from now', async () => {
    const now = Date.parse('Wed, 25 Nov 2026 12:00:00 GMT');
    const timed = createPushTransport({ allow: LOCAL, now: () => now });
    try {
      receiver.answer = answerWith(429, '', { 'retry-after': 'Wed, 25 Nov 2026 12:00:30 GMT' });
      assert.equal(responseOf(await timed.send(push(receiver.url))).retryAfterMs, 30_000);
    } finally {
      await timed.close();
    }
  });

  it('reads Retry-After as seconds or a date, and ignores anything else', () => {
    const now = Date.parse('Wed, 25 Nov 2026 12:00:00 GMT');
    assert.equal(parseRetryAfter('0', now), 0);
    assert.equal(parseRetryAfter(' 3 ', now), 3_000);
    assert.equal(parseRetryAfter('Wed, 25 Nov 2026 11:59:00 GMT', now), 0);
    assert.equal(parseRetryAfter(undefined, now), null);
    assert.equal(parseRetryAfter('', now), null);
    assert.equal(parseRetryAfter('soon', now), null);
    assert.equal(parseRetryAfter('-5', now), null);
  });

  it('a receiver that never answers: a failure "timeout after N ms"', async () => {
    receiver.answer = () => undefined;
    assert.equal(failureOf(await transport.send(push(receiver.url, { timeoutMs: 300 }))), 'timeout after 300 ms');
  });

  it('refuses a bad allowlist as INVALID_OPTION', () => {
    assert.throws(() => createPushTransport({ allow: '127.0.0.1/33' }), (error: unknown) => isDelayQError(error, 'INVALID_OPTION'));
  });

  it('never rejects: a bad URL or timeout is a failure too', async () => {
    assert.match(failureOf(await transport.send(push('not a url'))), /./);
    assert.match(failureOf(await transport.send(push(receiver.url, { timeoutMs: 0 }))), /timeoutMs/);
  });

  it('keeps a Content-Type the subscription sets, whatever its case', async () => {
    receiver.answer = answerWith(200);
    responseOf(await transport.send(push(receiver.url, { headers: { 'Content-Type': 'application/cloudevents+json' } })));
    assert.equal(receiver.received.at(-1)!.headers['content-type'], 'application/cloudevents+json');
  });

  it('an aborted push fails as aborted', async () => {
    receiver.answer = () => undefined;
    const controller = new AbortController();
    const sent = transport.send(push(receiver.url), controller.signal);
    const before = receiver.received.length;
    await receiver.arrivals(before + 1);
    controller.abort();
    assert.equal(failureOf(await sent), 'aborted');
  });

  it('a closed port: a connection failure, not a rejection', async () => {
    const port = await closedPort();
    assert.match(failureOf(await transport.send(push(`http://127.0.0.1:${port}/`))), /ECONNREFUSED/);
  });

  it('a 302 is the answer: the redirect is not followed', async () => {
    const before = receiver.received.length;
    receiver.answer = answerWith(302, '', { location: `${receiver.url}/elsewhere` });
    const result = responseOf(await transport.send(push(receiver.url)));
    assert.equal(result.status, 302);
    assert.equal(receiver.received.length, before + 1);
  });

  it(`keeps only the first ${PUSH_ERROR_BODY_BYTES} bytes of the answer`, async () => {
    const long = 'x'.repeat(150) + 'é'.repeat(100) + 'tail';
    receiver.answer = answerWith(400, long);
    const { bodyStart } = responseOf(await transport.send(push(receiver.url)));
    assert.equal(Buffer.byteLength(bodyStart) <= PUSH_ERROR_BODY_BYTES + 2, true);
    assert.equal(bodyStart, `${'x'.repeat(150)}${'é'.repeat(25)}`);
    assert.ok(!bodyStart.includes('tail'));
  });

  it('reuses keep-alive connections for pushes in a row, answers with bodies included', async () => {
    const fresh = await startReceiver('127.0.0.1', answerWith(500, 'y'.repeat(10_000)));
    try {
      for (let i = 0; i < 5; i++) responseOf(await transport.send(push(fresh.url)));
      fresh.answer = answerWith(200);
      for (let i = 0; i < 5; i++) responseOf(await transport.send(push(fresh.url)));
      assert.equal(fresh.received.length, 10);
      // undici frees a socket a tick after its response ends, so a push sent at once may open
      // a second one; from then on the pool has a free socket each time.
      assert.ok(fresh.connections <= 2, `${fresh.connections} connections for 10 pushes`);
    } finally {
      await fresh.close();
    }
  });

  it('an answer longer than 64 KiB: its status and first bytes, the connection closed, the next push fine', async () => {
    const fresh = await startReceiver('127.0.0.1', answerWith(503, 'z'.repeat(200_000)));
    try {
      const result = responseOf(await transport.send(push(fresh.url)));
      assert.deepEqual([result.status, result.bodyStart], [503, 'z'.repeat(PUSH_ERROR_BODY_BYTES)]);
      fresh.answer = answerWith(204);
      assert.equal(responseOf(await transport.send(push(fresh.url))).status, 204);
      assert.equal(fresh.received.length, 2);
      assert.deepEqual(transport.stats(), { inFlight: 0 });
    } finally {
      await fresh.close();
    }
  });

  it('an IPv6 loopback receiver, allowlisted', async () => {
    const v6 = await startReceiver('::1');
    try {
      assert.equal(responseOf(await transport.send(push(v6.url))).status, 204);
    } finally {
      await v6.close();
    }
  });
});

describe('the push transport refuses local destinations unless allowlisted (SSRF)', () => {
  let v4: Receiver;
  let v6: Receiver;
  let transport: UndiciPushTransport;
  before(async () => {
    v4 = await startReceiver('127.0.0.1');
    v6 = await startReceiver('::1');
    transport = createPushTransport();
  });
  after(async () => {
    await transport.close();
    await v4.close();
    await v6.close();
  });

  const hosts = (port: number, port6: number): Array<[string, RegExp]> => [
    [`http://127.0.0.1:${port}/`, /127\.0\.0\.1: loopback/],
    [`http://[::1]:${port6}/`, /::1: loopback/],
    [`http://[::ffff:127.0.0.1]:${port}/`, /127\.0\.0\.1: loopback/],
    [`http://[::7f00:1]:${port}/`, /::7f00:1: ipv4Compatible/],
    [`http://[::127.0.0.1]:${port}/`, /::7f00:1: ipv4Compatible/],
    [`http://[64:ff9b::7f00:1]:${port}/`, /127\.0\.0\.1: loopback/],
    [`http://0.0.0.0:${port}/`, /0\.0\.0\.0: unspecified/],
    [`http://2130706433:${port}/`, /127\.0\.0\.1: loopback/],
    [`http://0x7f.1:${port}/`, /127\.0\.0\.1: loopback/],
    [`http://localhost:${port}/`, /(127\.0\.0\.1|::1): loopback/],
    ['http://10.0.0.1/', /10\.0\.0\.1: private/],
    ['http://169.254.169.254/latest/meta-data/', /169\.254\.169\.254: linkLocal/],
    ['http://100.64.0.1/', /100\.64\.0\.1: carrierGradeNat/],
  ];

  it('at checkUrl: INVALID_URL with the reason', async () => {
    for (const [url, reason] of hosts(v4.port, v6.port))
      await assert.rejects(transport.checkUrl(url), (error: unknown) => isDelayQError(error, 'INVALID_URL') && reason.test(error.message), url);
  });

  it('at send time: a failed push naming the refused destination, and nothing reaches the receivers', async () => {
    for (const [url, reason] of hosts(v4.port, v6.port)) assert.match(failureOf(await transport.send(push(url, { timeoutMs: 2_000 }))), reason, url);
    assert.equal(v4.received.length + v6.received.length, 0);
  });

  it('DNS rebinding: a name that resolved to a public address at checkUrl and to loopback at connect time is refused', async () => {
    const rebinding = createPushTransport({ lookup: () => Promise.resolve(['93.184.216.34']) });
    try {
      const url = `http://localhost:${v4.port}/`;
      await rebinding.checkUrl(url);
      assert.match(failureOf(await rebinding.send(push(url))), /refused destination (127\.0\.0\.1|::1): loopback/);
      assert.equal(v4.received.length, 0);
    } finally {
      await rebinding.close();
    }
  });

  it('the connected-address check alone (no literal or lookup check before it) destroys a loopback socket', async () => {
    const connect = refuseConnected(buildConnector({}), createAddressGuard());
    const error = await new Promise<Error | null>((resolve) => connect({ hostname: '127.0.0.1', protocol: 'http:', port: String(v4.port) }, (...args) => resolve(args[0])));
    assert.ok(error instanceof RefusedDestinationError);
    assert.equal(error.message, 'refused destination 127.0.0.1: loopback');
    assert.equal(v4.received.length, 0);
  });

  it('an allowlist entry with a port: that port gets through, another port of the same address is refused at every check', async () => {
    const ported = createPushTransport({ allow: `127.0.0.1:${v4.port}` });
    const other = await startReceiver('127.0.0.1');
    try {
      assert.equal(responseOf(await ported.send(push(v4.url))).status, 204);
      await ported.checkUrl(v4.url);
      await assert.rejects(ported.checkUrl(other.url), (error: unknown) => isDelayQError(error, 'INVALID_URL') && /allowlisted on other ports only/.test(error.message));
      assert.match(failureOf(await ported.send(push(other.url))), new RegExp(`127\\.0\\.0\\.1: loopback \\(allowlisted on other ports only, not ${other.port}\\)`));
      assert.match(failureOf(await ported.send(push(`http://localhost:${other.port}/`))), /loopback/);
      const connect = refuseConnected(buildConnector({}), createAddressGuard(`127.0.0.1:${v4.port}`));
      const error = await new Promise<Error | null>((resolve) => connect({ hostname: '127.0.0.1', protocol: 'http:', port: String(other.port) }, (...args) => resolve(args[0])));
      assert.ok(error instanceof RefusedDestinationError);
      assert.equal(other.received.length, 0);
      assert.equal(v4.received.length, 1);
    } finally {
      await ported.close();
      await other.close();
    }
  });
});
