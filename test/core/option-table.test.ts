// The options table's rows hold together, and the resolvers read their defaults and bounds from it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_ENGINE_TUNING, resolveEngineTuning, resolveLimits } from '../../src/core/options.js';
import { ENGINE_OPTIONS, inBounds, OPTIONS, parseOptionText, STORE_SCOPES, storesOf, URL_KINDS } from '../../src/core/option-table/index.js';
import { DEFAULT_LIMITS, DEFAULT_TASK_DEFAULTS } from '../../src/core/task/validate.js';
import { STORE_KINDS } from '../../src/stores/kinds.js';

const snake = (name: string): string => name.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase();

describe('the options table', () => {
  it('names each option, flag, variable and URL parameter once', () => {
    for (const key of ['library', 'flag', 'env'] as const) {
      const given = OPTIONS.map((o) => o[key]).filter((v) => v !== undefined && v !== null);
      assert.equal(new Set(given).size, given.length, `${key} repeated`);
    }
    const names = OPTIONS.map((o) => o.name);
    assert.equal(new Set(names).size, names.length);
  });

  it('names each variable after its flag: DELAYQ_ and the flag in upper snake case', () => {
    for (const o of OPTIONS.filter((row) => row.flag !== undefined)) assert.equal(o.env, `DELAYQ_${snake(o.flag ?? '')}`, o.name);
    for (const o of OPTIONS.filter((row) => row.flag === undefined)) assert.equal(o.env, undefined, `${o.name}: a variable without a flag`);
  });

  it('keeps every default within its own type and bounds', () => {
    for (const o of OPTIONS) {
      if (o.default === null) continue;
      if (o.type === 'integer' || o.type === 'number') assert.ok(typeof o.default === 'number' && inBounds(o, o.default), o.name);
      else if (o.type === 'enum') assert.ok(o.values?.includes(String(o.default)), o.name);
      else if (o.type === 'boolean') assert.equal(typeof o.default, 'boolean', o.name);
      else assert.equal(typeof o.default, 'string', o.name);
      // What a flag or a variable says is read back as the default itself.
      if (o.type !== 'list') assert.deepEqual(parseOptionText(o, String(o.default)), { value: o.default }, o.name);
    }
  });

  it('scopes store options by the kinds of the store registry, URL parameters only where a URL carries a query', () => {
    assert.deepEqual([...STORE_SCOPES].sort(), STORE_KINDS.map((k) => k.name).sort());
    for (const o of OPTIONS) {
      const stores = storesOf(o);
      assert.equal(o.group === 'store', stores.length > 0, `${o.name}: a store option has store kinds as its scope, and only it`);
      if (o.url !== undefined) assert.ok(stores.some((k) => URL_KINDS.includes(k)), `${o.name}: a URL parameter of no kind that reads it`);
    }
  });

  it('names every kind of store in the --store description', () => {
    const store = OPTIONS.find((o) => o.name === 'store');
    for (const kind of STORE_KINDS) for (const scheme of kind.schemes) assert.ok(store?.description.includes(scheme), scheme);
  });

  it('parses text by type and bounds, saying what it expected', () => {
    const port = OPTIONS.find((o) => o.name === 'port')!;
    assert.deepEqual(parseOptionText(port, '8080'), { value: 8080 });
    assert.deepEqual(parseOptionText(port, '70000'), { problem: 'expected an integer from 0 to 65535 (got "70000")' });
    assert.deepEqual(parseOptionText(port, '1e3'), { problem: 'expected an integer from 0 to 65535 (got "1e3")' });
    const jitter = ENGINE_OPTIONS['defaults.backoff.jitter'];
    assert.deepEqual(parseOptionText(jitter, '0.5'), { value: 0.5 });
    assert.ok('problem' in parseOptionText(jitter, '1.5'));
    const synchronous = OPTIONS.find((o) => o.name === 'synchronous')!;
    assert.deepEqual(parseOptionText(synchronous, 'fast'), { problem: 'expected NORMAL or FULL (got "fast")' });
  });

  it('is where the engine takes its defaults and bounds from', () => {
    assert.equal(DEFAULT_ENGINE_TUNING.retentionMs, ENGINE_OPTIONS.retentionMs.default);
    assert.equal(DEFAULT_ENGINE_TUNING.loader.pageSize, ENGINE_OPTIONS['loader.pageSize'].default);
    assert.equal(DEFAULT_LIMITS.maxPayloadBytes, ENGINE_OPTIONS['limits.maxPayloadBytes'].default);
    assert.equal(DEFAULT_TASK_DEFAULTS.backoff.jitter, ENGINE_OPTIONS['defaults.backoff.jitter'].default);
    assert.throws(() => resolveEngineTuning({ tickMs: ENGINE_OPTIONS.tickMs.max + 1 }), /tickMs: must be an integer from 1 to 60000/);
    assert.throws(() => resolveLimits({ maxPayloadBytes: ENGINE_OPTIONS['limits.maxPayloadBytes'].max + 1 }), /limits\.maxPayloadBytes: must be an integer from 1 to 67108864/);
  });
});
