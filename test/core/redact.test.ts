// URLs in logs: no userinfo, no query, no fragment, wherever they appear in a line.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { redactUrl, redactUrlsIn } from '../../src/core/redact.js';

describe('redactUrl', () => {
  const CASES: [string, string][] = [
    ['https://h.example/hook?token=abc', 'https://h.example/hook?<redacted>'],
    ['https://u:p@h.example:8443/x#frag', 'https://***@h.example:8443/x?<redacted>'],
    ['redis://:pw@127.0.0.1:6379/0', 'redis://***@127.0.0.1:6379/0'],
    ['http://127.0.0.1:9/hook', 'http://127.0.0.1:9/hook'],
  ];
  for (const [url, shown] of CASES) it(`${url} -> ${shown}`, () => assert.equal(redactUrl(url), shown));
});

describe('redactUrlsIn', () => {
  it('redacts every URL of a JSON log line and leaves the rest', () => {
    const line = '{"msg":"push failed","url":"https://u:p@ss@h.example/x?token=abc","err":"connect redis://:secret@10.0.0.1:6379 failed","n":1}';
    assert.equal(redactUrlsIn(line), '{"msg":"push failed","url":"https://***@h.example/x?<redacted>","err":"connect redis://***@10.0.0.1:6379 failed","n":1}');
  });

  it('is idempotent, so a redacted message logged again reads the same', () => {
    const once = redactUrlsIn('store "redis://u:pw@h:1/0?x=1": unknown parameter');
    assert.equal(redactUrlsIn(once), once);
  });

  it('never lets a generated query value or password through', () => {
    const secret = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyz0123456789-_.~%'), minLength: 8, maxLength: 40 });
    fc.assert(
      fc.property(secret, secret, fc.constantFrom('http', 'https', 'redis', 'rediss', 'postgres'), (query, password, scheme) => {
        const text = `{"a":"${scheme}://user:${password}@host.example:1/p/a?k=${query}&z=1","b":"${scheme}://h/p#${query}"}`;
        const out = redactUrlsIn(text);
        assert.ok(!out.includes(`k=${query}`) && !out.includes(`#${query}`) && !out.includes(`:${password}@`), out);
      }),
    );
  });
});
