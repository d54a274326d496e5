/**
 * Our signatures checked by an independent implementation: the Standard Webhooks reference
 * package (`standardwebhooks` on npm), never by delayq's own code.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import { isDelayQError } from '../../src/core/errors.js';
import { isValidSecret } from '../../src/core/push-input.js';
import { generateSecret, parseSecret, signedHeaders, webhookIdOf } from '../../src/push/signature.js';

const nowSeconds = (): number => Math.floor(Date.now() / 1000);
const body = JSON.stringify({ order: 42, note: 'café ✓' });

describe('Standard Webhooks signing', () => {
  it('signs so that the reference package verifies the body with the secret', () => {
    const secret = generateSecret();
    const headers = signedHeaders({ id: 'task-1', timestampSeconds: nowSeconds(), body, secrets: [secret] });
    assert.equal(headers['webhook-id'], 'task-1');
    assert.match(headers['webhook-signature'], /^v1,[A-Za-z0-9+/]+=*$/);
    assert.deepEqual(new Webhook(secret).verify(body, { ...headers }), JSON.parse(body));
  });

  it('a changed body, id, timestamp or another secret does not verify', () => {
    const secret = generateSecret();
    const timestampSeconds = nowSeconds();
    const headers = { ...signedHeaders({ id: 'task-1', timestampSeconds, body, secrets: [secret] }) };
    assert.throws(() => new Webhook(secret).verify(`${body} `, headers), /No matching signature/);
    assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-id': 'task-2' }), /No matching signature/);
    assert.throws(() => new Webhook(secret).verify(body, { ...headers, 'webhook-timestamp': String(timestampSeconds - 1) }), /No matching signature/);
    assert.throws(() => new Webhook(generateSecret()).verify(body, headers), /No matching signature/);
  });

  it('during a rotation, signs with every secret, space-separated, and each secret alone verifies', () => {
    const current = generateSecret();
    const old = generateSecret();
    const headers = { ...signedHeaders({ id: 'task-9', timestampSeconds: nowSeconds(), body, secrets: [current, old] }) };
    const signatures = headers['webhook-signature'].split(' ');
    assert.equal(signatures.length, 2);
    assert.notEqual(signatures[0], signatures[1]);
    assert.deepEqual(new Webhook(current).verify(body, headers), JSON.parse(body));
    assert.deepEqual(new Webhook(old).verify(body, headers), JSON.parse(body));
    // Each signature is the one its secret makes alone: the order is current first.
    const alone = signedHeaders({ id: 'task-9', timestampSeconds: Number(headers['webhook-timestamp']), body, secrets: [old] });
    assert.equal(signatures[1], alone['webhook-signature']);
  });

  it('keys the HMAC with the decoded secret bytes of any accepted length (24 and 64 bytes)', () => {
    for (const size of [24, 64]) {
      const secret = `whsec_${randomBytes(size).toString('base64')}`;
      const headers = { ...signedHeaders({ id: 'x', timestampSeconds: nowSeconds(), body: '{}', secrets: [secret] }) };
      assert.deepEqual(new Webhook(secret).verify('{}', headers), {});
    }
  });

  it('generates whsec_ + base64 of 32 random bytes, different every time', () => {
    const a = generateSecret();
    assert.match(a, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.equal(parseSecret(a).length, 32);
    assert.notEqual(a, generateSecret());
  });

  it('refuses a secret without the prefix, not base64, or outside 24..64 bytes, naming the field', () => {
    const bad = [
      randomBytes(32).toString('base64'),
      'whsec_not base64!',
      `whsec_${randomBytes(23).toString('base64')}`,
      `whsec_${randomBytes(65).toString('base64')}`,
      `whsec_${randomBytes(32).toString('base64url')}x-_`,
    ];
    for (const secret of bad) {
      assert.equal(isValidSecret(secret), false, secret);
      assert.throws(
        () => parseSecret(secret),
        (error: unknown) => isDelayQError(error, 'INVALID_ARGUMENT') && error.details?.['field'] === 'secret' && !error.message.includes(secret.slice(6)),
        secret,
      );
    }
    assert.throws(() => parseSecret('whsec_'), /secret/);
    assert.throws(() => signedHeaders({ id: 'x', timestampSeconds: 1, body: '', secrets: ['whsec_short'] }), /secret/);
    assert.throws(() => signedHeaders({ id: 'x', timestampSeconds: 1, body: '', secrets: [] }), /at least one secret/);
  });

  it('refuses a webhook id with a "." (the spec forbids it), and webhookIdOf maps task ids one-to-one without one', () => {
    assert.throws(() => signedHeaders({ id: 'a.1700000000', timestampSeconds: 1, body: '', secrets: [generateSecret()] }), (error: unknown) => isDelayQError(error, 'INVALID_ARGUMENT'));
    assert.equal(webhookIdOf('order-42:x_y'), 'order-42:x_y');
    assert.equal(webhookIdOf('a.b..c'), 'a%2Eb%2E%2Ec');
    assert.notEqual(webhookIdOf('a.b'), webhookIdOf('a-b'));
    const secret = generateSecret();
    const headers = { ...signedHeaders({ id: webhookIdOf('invoice.7'), timestampSeconds: nowSeconds(), body: '{}', secrets: [secret] }) };
    assert.deepEqual(new Webhook(secret).verify('{}', headers), {});
  });
});
