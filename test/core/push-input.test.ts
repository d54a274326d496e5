import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { activeSecrets, isValidSecret, maskSecret, rotateSecrets } from '../../src/core/push-input.js';
import { SECRET_ROTATION_GRACE_MS } from '../../src/core/push.js';

const secretOf = (bytes: number, fill = 7): string => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`;

describe('push secrets', () => {
  it('accept whsec_ + base64 of 24 to 64 bytes, nothing else', () => {
    for (const bytes of [24, 25, 26, 32, 64]) assert.equal(isValidSecret(secretOf(bytes)), true, `${bytes} bytes`);
    for (const bytes of [0, 16, 23, 65]) assert.equal(isValidSecret(secretOf(bytes)), false, `${bytes} bytes`);
    const good = secretOf(32);
    for (const bad of [good.slice(6), `whsec:${good.slice(6)}`, `${good}=`, good.slice(0, -1), good.replace('B', '-'), 42, undefined])
      assert.equal(isValidSecret(bad), false, String(bad));
  });

  it('accept only the canonical base64 of a secret: no stray bits before the padding', () => {
    const one = secretOf(32); // 32 bytes: one '=' of padding, the last digit's low 2 bits unused
    const two = secretOf(25); // 25 bytes: '==', the last digit's low 4 bits unused
    assert.equal(isValidSecret(one), true);
    assert.equal(isValidSecret(two), true);
    const stray = (secret: string, padding: number): string => {
      const at = secret.length - 1 - padding;
      const digits = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
      return secret.slice(0, at) + digits[digits.indexOf(secret[at]!) | 1] + secret.slice(at + 1);
    };
    assert.equal(isValidSecret(stray(one, 1)), false);
    assert.equal(isValidSecret(stray(two, 2)), false);
  });

  it('mask as the prefix and 4 characters', () => {
    assert.equal(maskSecret('whsec_abcdEFGHijkl'), 'whsec_abcd…');
  });

  it('rotate: the same or a new current secret, the old one signing for the grace period, expired ones dropped', () => {
    const now = 1_000_000;
    const grace = now + SECRET_ROTATION_GRACE_MS;
    const cases: [string, { secret: string; expiresAt: number | null }[], string, { secret: string; expiresAt: number | null }[]][] = [
      ['first secret', [], 'a', [{ secret: 'a', expiresAt: null }]],
      ['the same secret again', [{ secret: 'a', expiresAt: null }], 'a', [{ secret: 'a', expiresAt: null }]],
      ['a new secret', [{ secret: 'a', expiresAt: null }], 'b', [{ secret: 'b', expiresAt: null }, { secret: 'a', expiresAt: grace }]],
      [
        'a third, with one still in grace and one expired',
        [{ secret: 'b', expiresAt: null }, { secret: 'a', expiresAt: now + 5 }, { secret: 'z', expiresAt: now }],
        'c',
        [{ secret: 'c', expiresAt: null }, { secret: 'b', expiresAt: grace }, { secret: 'a', expiresAt: now + 5 }],
      ],
      ['back to an old one', [{ secret: 'b', expiresAt: null }, { secret: 'a', expiresAt: now + 5 }], 'a', [{ secret: 'a', expiresAt: null }, { secret: 'b', expiresAt: grace }]],
    ];
    for (const [name, before, next, after] of cases) assert.deepEqual(rotateSecrets(before, next, now), after, name);
    assert.deepEqual(activeSecrets(cases[3]![3], now + 5), ['c', 'b']);
  });
});
