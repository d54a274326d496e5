/** W3C trace context as delayq checks, stores and derives it (core/trace-context.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { childTraceparent, parseTraceparent, parseTracestate, traceHeaders, traceOf } from '../../src/core/trace-context.js';

const PARENT = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';

describe('trace context', () => {
  it('reads a version-00 traceparent exactly, and a later version by its 00 prefix', () => {
    assert.equal(parseTraceparent(PARENT), PARENT);
    assert.equal(parseTraceparent(` ${PARENT} `), PARENT);
    assert.equal(parseTraceparent(`01-${PARENT.slice(3)}-what-comes-next`), PARENT.replace(/-01$/, '-01'));
    assert.equal(parseTraceparent(`cc-${PARENT.slice(3)}`), PARENT);
  });

  it('ignores a traceparent that is not one: case, length, zeros, version ff, junk after a 00, not text', () => {
    for (const bad of [
      PARENT.toUpperCase(),
      PARENT.slice(0, -1),
      `${PARENT}-extra`,
      `${PARENT},${PARENT}`,
      `00-${'0'.repeat(32)}-b7ad6b7169203331-01`,
      `00-0af7651916cd43dd8448eb211c80319c-${'0'.repeat(16)}-01`,
      `ff-${PARENT.slice(3)}`,
      `cc-${PARENT.slice(3)}x`,
      '',
      'x'.repeat(10_000),
      42,
      null,
    ])
      assert.equal(parseTraceparent(bad), null, String(bad));
  });

  it('keeps a tracestate of valid members, trimmed; drops one malformed, over 32 members or over 512 characters', () => {
    assert.equal(parseTracestate('rojo=00f067aa0ba902b7, congo=t61rcWkgMzE'), 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE');
    assert.equal(parseTracestate('t@vendor=a b|c%,,'), 't@vendor=a b|c%');
    for (const bad of ['Rojo=1', 'rojo', 'rojo=', 'rojo=a=b', 'rojo=é', '', ' , '])
      assert.equal(parseTracestate(bad), null, bad);
    const members = (n: number, size = 3): string => Array.from({ length: n }, (_, i) => `k${i}=${'v'.repeat(size)}`).join(',');
    assert.notEqual(parseTracestate(members(32)), null);
    assert.equal(parseTracestate(members(33)), null);
    assert.equal(parseTracestate(members(2, 300)), null, 'over 512 characters');
  });

  it('stores traceparent, then a space and tracestate; a bad tracestate alone is dropped, a bad traceparent drops both', () => {
    assert.equal(traceOf(PARENT, undefined), PARENT);
    assert.equal(traceOf(PARENT, 'a=1, b=2'), `${PARENT} a=1,b=2`);
    assert.equal(traceOf(PARENT, 'A=1'), PARENT);
    assert.equal(traceOf('nope', 'a=1'), undefined);
    assert.deepEqual(traceHeaders(`${PARENT} a=1 x,b=2`), { traceparent: PARENT, tracestate: 'a=1 x,b=2' });
    assert.deepEqual(traceHeaders(PARENT), { traceparent: PARENT });
    for (const row of [null, undefined, '', 'garbage', 7, `${PARENT}x`]) assert.equal(traceHeaders(row), null, String(row));
    assert.deepEqual(traceHeaders(`${PARENT} A=bad`), { traceparent: PARENT });
  });

  it('makes a child: same trace id and flags, the new parent id', () => {
    assert.equal(childTraceparent(PARENT, '1111111111111111'), '00-0af7651916cd43dd8448eb211c80319c-1111111111111111-01');
  });
});
