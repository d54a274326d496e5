/**
 * storableText (src/core/text.ts): text from outside made holdable by every store. Against a
 * reference that walks the code points: NUL and lone surrogates become U+FFFD, the cut never
 * leaves half a pair, and holdable text within the bound is kept as it is.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { validatePushUrl } from '../../src/core/push-input.js';
import { storableText } from '../../src/core/text.js';

/** The same, one UTF-16 unit at a time. */
function reference(text: string, max: number): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    const high = unit >= 0xd800 && unit <= 0xdbff;
    const low = unit >= 0xdc00 && unit <= 0xdfff;
    const next = text.charCodeAt(i + 1);
    if (high && i + 1 < text.length && next >= 0xdc00 && next <= 0xdfff) {
      if (i + 2 > max) break;
      out += text.slice(i, i + 2);
      i++;
      continue;
    }
    if (i + 1 > max) break;
    out += unit === 0 || high || low ? '\uFFFD' : text[i];
  }
  return out;
}

const units = fc.string({ unit: fc.oneof(fc.constantFrom('\u0000', '\uD83D', '\uDE00', '\uD800', '\uDFFF', 'a', '\u00e9'), fc.integer({ min: 0, max: 0xffff }).map((n) => String.fromCharCode(n))), maxLength: 40 });

describe('storableText', () => {
  it('holds to the reference: no NUL, no lone surrogate, at most max units, pairs whole', () => {
    fc.assert(
      fc.property(units, fc.integer({ min: 1, max: 45 }), (text, max) => {
        const out = storableText(text, max);
        assert.equal(out, reference(text, max));
        assert.ok(out.length <= max);
        assert.ok(!out.includes('\u0000'));
        assert.equal(Buffer.from(out, 'utf8').toString('utf8'), out, 'survives a trip through UTF-8');
      }),
      { numRuns: 2_000 },
    );
  });

  it('the examples of its header', () => {
    assert.equal(storableText('bad\u0000body', 100), 'bad\uFFFDbody');
    assert.equal(storableText('a\uD83D', 100), 'a\uFFFD');
    assert.equal(storableText('ab\uD83D\uDE00', 3), 'ab');
    assert.equal(storableText('plain', 5), 'plain');
  });

  it('a push url with a control character or a lone surrogate is refused, not kept as text a store cannot hold', () => {
    for (const url of ['https://x.example/a\u0000b', 'https://x.example/\uD800', 'https://x.example/a\nb', 'https://x.example/\u007f'])
      assert.throws(() => validatePushUrl(url), /INVALID_URL|must not contain control characters/, JSON.stringify(url));
    assert.equal(validatePushUrl('https://x.example/caf%C3%A9?\u00e9'), 'https://x.example/caf%C3%A9?\u00e9');
  });
});
