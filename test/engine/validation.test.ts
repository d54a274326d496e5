import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayQError, type ErrorCode } from '../../src/core/errors.js';
import type { ScheduleInput } from '../../src/core/task/validate.js';
import type { EngineQueue } from '../../src/engine/engine-queue.js';
import type { DelayQueueOptions } from '../../src/open-queue.js';
import { T0, flush, openManual } from '../helpers/engine.js';

const circular: Record<string, unknown> = {};
circular['self'] = circular;
/** `[[[...]]]` nested `depth` deep (built without recursion). */
function nested(depth: number): unknown {
  let value: unknown = [];
  for (let i = 1; i < depth; i++) value = [value];
  return value;
}
function nestedObjects(depth: number): unknown {
  let value: unknown = { leaf: 1 };
  for (let i = 1; i < depth; i++) value = { a: value };
  return value;
}
/** 60 levels of an object held twice: 2^60 nodes once serialised, a few bytes in memory. */
function sharedTwice(levels: number): unknown {
  let value: unknown = { leaf: 1 };
  for (let i = 0; i < levels; i++) value = { a: value, b: value };
  return value;
}
const protoKey = JSON.parse('{"a":{"__proto__":{"polluted":true}}}') as unknown;
const TEN_YEARS = Math.round(10 * 365.25 * 24 * 3600 * 1000);

const badSchedules: [string, unknown, ErrorCode][] = [
  ['NaN delay', { topic: 't', delayMs: Number.NaN }, 'INVALID_DELAY'],
  ['Infinity delay', { topic: 't', delayMs: Number.POSITIVE_INFINITY }, 'INVALID_DELAY'],
  ['negative delay', { topic: 't', delayMs: -1 }, 'INVALID_DELAY'],
  ['fractional delay', { topic: 't', delayMs: 1.5 }, 'INVALID_DELAY'],
  ['string delay', { topic: 't', delayMs: '10' }, 'INVALID_DELAY'],
  ['delay over ten years', { topic: 't', delayMs: TEN_YEARS + 1 }, 'INVALID_DELAY'],
  ['both delayMs and runAt', { topic: 't', delayMs: 5, runAt: T0 + 5 }, 'INVALID_DELAY'],
  ['runAt NaN', { topic: 't', runAt: Number.NaN }, 'INVALID_DELAY'],
  ['runAt fractional', { topic: 't', runAt: T0 + 0.5 }, 'INVALID_DELAY'],
  ['runAt not ISO', { topic: 't', runAt: 'tomorrow' }, 'INVALID_DELAY'],
  ['runAt date only', { topic: 't', runAt: '2030-01-02' }, 'INVALID_DELAY'],
  ['runAt invalid date', { topic: 't', runAt: '2030-02-31T25:00:00Z' }, 'INVALID_DELAY'],
  ['runAt on 30 February (Date.parse: 2 March)', { topic: 't', runAt: '2030-02-30T00:00:00Z' }, 'INVALID_DELAY'],
  ['runAt on 29 February of a common year', { topic: 't', runAt: '2029-02-29T00:00:00Z' }, 'INVALID_DELAY'],
  ['runAt at 24:00 (Date.parse: the next day)', { topic: 't', runAt: '2030-01-01T24:00:00Z' }, 'INVALID_DELAY'],
  ['runAt with an offset of 24 h', { topic: 't', runAt: '2030-01-01T00:00:00+24:00' }, 'INVALID_DELAY'],
  ['runAt beyond the Date range', { topic: 't', runAt: 1e20 }, 'INVALID_DELAY'],
  ['runAt beyond ten years', { topic: 't', runAt: T0 + TEN_YEARS + 1 }, 'INVALID_DELAY'],
  ['missing topic', { delayMs: 5 }, 'INVALID_TOPIC'],
  ['empty topic', { topic: '' }, 'INVALID_TOPIC'],
  ['topic over 200 characters', { topic: 'x'.repeat(201) }, 'INVALID_TOPIC'],
  ['topic with a space', { topic: 'a b' }, 'INVALID_TOPIC'],
  ['topic with a slash', { topic: 'a/b' }, 'INVALID_TOPIC'],
  ['topic not a string', { topic: 5 }, 'INVALID_TOPIC'],
  ['empty id', { topic: 't', id: '' }, 'INVALID_ID'],
  ['id over 256 characters', { topic: 't', id: 'i'.repeat(257) }, 'INVALID_ID'],
  ['id with unicode', { topic: 't', id: 'ünï' }, 'INVALID_ID'],
  ['payload with a BigInt', { topic: 't', payload: { n: 10n } }, 'INVALID_PAYLOAD'],
  ['circular payload', { topic: 't', payload: circular }, 'INVALID_PAYLOAD'],
  ['function payload', { topic: 't', payload: () => 1 }, 'INVALID_PAYLOAD'],
  ['payload nested 100,000 deep', { topic: 't', payload: nested(100_000) }, 'PAYLOAD_TOO_DEEP'],
  ['payload of objects nested 100,000 deep', { topic: 't', payload: nestedObjects(100_000) }, 'PAYLOAD_TOO_DEEP'],
  ['payload that would serialise to 2^60 nodes', { topic: 't', payload: sharedTwice(60) }, 'PAYLOAD_TOO_LARGE'],
  ['payload nested 129 deep', { topic: 't', payload: { list: nested(128) } }, 'PAYLOAD_TOO_DEEP'],
  ['payload with a __proto__ key', { topic: 't', payload: protoKey }, 'INVALID_ARGUMENT'],
  ['payload with constructor.prototype', { topic: 't', payload: { constructor: { prototype: { x: 1 } } } }, 'INVALID_ARGUMENT'],
  ['payload over 1 MiB', { topic: 't', payload: 'x'.repeat(1024 * 1024) }, 'PAYLOAD_TOO_LARGE'],
  ['multibyte payload over 1 MiB', { topic: 't', payload: 'é'.repeat(600 * 1024) }, 'PAYLOAD_TOO_LARGE'],
  ['ttrMs zero', { topic: 't', ttrMs: 0 }, 'INVALID_OPTION'],
  ['maxAttempts fractional', { topic: 't', maxAttempts: 2.5 }, 'INVALID_OPTION'],
  ['backoff factor below 1', { topic: 't', backoff: { factor: 0.5 } }, 'INVALID_OPTION'],
  ['backoff jitter above 1', { topic: 't', backoff: { jitter: 2 } }, 'INVALID_OPTION'],
  ['backoff unknown field', { topic: 't', backoff: { base: 1 } }, 'INVALID_ARGUMENT'],
  ['unknown field', { topic: 't', delay: 5 }, 'INVALID_ARGUMENT'],
  ['not an object', 'orders', 'INVALID_ARGUMENT'],
  ['null', null, 'INVALID_ARGUMENT'],
];

async function snapshot(q: EngineQueue): Promise<unknown> {
  const stats = await q.stats();
  return { counts: stats.counts, topics: stats.topics, timers: stats.timers };
}

describe('bad input', () => {
  it('gets a typed error with a stable code and changes nothing already scheduled', async () => {
    const { q, clock } = await openManual();
    await q.schedule({ topic: 'keep', id: 'a', delayMs: 100, payload: { v: 1 } });
    await q.schedule({ topic: 'keep', id: 'b', delayMs: 200 });
    const before = await snapshot(q);
    for (const [name, input, code] of badSchedules) {
      await assert.rejects(
        q.schedule(input as ScheduleInput),
        (e: unknown) => e instanceof DelayQError && e.code === code && e.message.length > 0,
        `${name} should be ${code}`,
      );
      await assert.rejects(
        q.scheduleMany([{ topic: 'keep', id: 'fine' }, input as ScheduleInput]),
        (e: unknown) => e instanceof DelayQError && e.code === code && e.details?.['index'] === 1,
        `${name} in a batch`,
      );
      assert.deepEqual(await snapshot(q), before, `${name} left the queue unchanged`);
    }
    assert.equal(await q.get('fine'), null, 'a batch with one bad task stores none');
    const seen: string[] = [];
    q.work('keep', (d) => void seen.push(d.id));
    clock.advance(200);
    await flush();
    assert.deepEqual(seen, ['a', 'b']);
    await q.close();
  });

  it('takes a payload nested exactly as deep as the limit, and one shared by two branches; names a forbidden key', async () => {
    const { q } = await openManual();
    await q.schedule({ topic: 't', id: 'deep', payload: { list: nested(127) } });
    assert.equal((await q.get('deep'))?.payload !== undefined, true);
    const shared = { n: 1 };
    await q.schedule({ topic: 't', id: 'shared', payload: { a: shared, b: [shared, shared] } });
    assert.deepEqual((await q.get('shared'))?.payload, { a: { n: 1 }, b: [{ n: 1 }, { n: 1 }] });
    await q.schedule({ topic: 't', id: 'ctor', payload: { constructor: 'fine', prototype: 1 } });
    await assert.rejects(q.schedule({ topic: 't', payload: protoKey }), (e: unknown) => e instanceof DelayQError && e.message.includes('"__proto__"'));
    await assert.rejects(
      q.schedule({ topic: 't', payload: { constructor: { prototype: {} } } }),
      (e: unknown) => e instanceof DelayQError && e.message.includes('"constructor.prototype"'),
    );
    const small = await openManual({ limits: { maxPayloadDepth: 2 } });
    await small.q.schedule({ topic: 't', payload: [[1]] });
    await assert.rejects(small.q.schedule({ topic: 't', payload: [[[1]]] }), (e: unknown) => e instanceof DelayQError && e.code === 'PAYLOAD_TOO_DEEP' && e.details?.['limit'] === 2);
    await small.q.close();
    await q.close();
  });

  it('rejects bad ids, options and receipts on every other call', async () => {
    const { q } = await openManual();
    const cases: [string, () => Promise<unknown>, ErrorCode][] = [
      ['cancel empty id', () => q.cancel(''), 'INVALID_ID'],
      ['get long id', () => q.get('x'.repeat(300)), 'INVALID_ID'],
      ['reschedule without time', () => q.reschedule('a', {}), 'INVALID_DELAY'],
      ['reschedule both', () => q.reschedule('a', { delayMs: 1, runAt: T0 }), 'INVALID_DELAY'],
      ['reschedule negative', () => q.reschedule('a', { delayMs: -5 }), 'INVALID_DELAY'],
      ['reschedule to 31 April', () => q.reschedule('a', { runAt: '2030-04-31T00:00:00Z' }), 'INVALID_DELAY'],
      ['retryDead at second 60', () => q.retryDead('a', { runAt: '2030-01-01T00:00:60Z' }), 'INVALID_DELAY'],
      ['timeline from 30 February', () => q.dueHistogram({ from: '2030-02-30T00:00:00Z' }), 'INVALID_ARGUMENT'],
      ['reserve max 0', () => q.reserve('t', { max: 0 }), 'INVALID_OPTION'],
      ['reserve max 1001', () => q.reserve('t', { max: 1_001 }), 'INVALID_OPTION'],
      ['reserve waitMs over 60 s', () => q.reserve('t', { waitMs: 60_001 }), 'INVALID_OPTION'],
      ['reserve bad topic', () => q.reserve('a b'), 'INVALID_TOPIC'],
      ['ack empty receipt', () => q.ack('a', ''), 'INVALID_ARGUMENT'],
      ['nack negative delay', () => q.nack('a', 'r', { delayMs: -1 }), 'INVALID_OPTION'],
      ['list bad state', () => q.list({ state: 'sleeping' as never }), 'INVALID_ARGUMENT'],
      ['list limit 0', () => q.list({ limit: 0 }), 'INVALID_OPTION'],
      ['batch over the limit', () => q.scheduleMany(Array.from({ length: 10_001 }, () => ({ topic: 't' }))), 'BATCH_TOO_LARGE'],
      ['cancelMany over the limit', () => q.cancelMany(Array.from({ length: 10_001 }, (_, i) => `id${i}`)), 'BATCH_TOO_LARGE'],
      ['cancelMany not an array', () => q.cancelMany('a' as never), 'INVALID_ARGUMENT'],
      ['cancelMany bad id', () => q.cancelMany(['a', 'b c']), 'INVALID_ID'],
      ['ackMany without a receipt', () => q.ackMany([{ id: 'a' } as never]), 'INVALID_ARGUMENT'],
      ['ackMany not an object', () => q.ackMany([null as never]), 'INVALID_ARGUMENT'],
      ['ackMany bad id', () => q.ackMany([{ id: 'a b', receipt: 'r' }]), 'INVALID_ID'],
    ];
    for (const [name, call, code] of cases) {
      await assert.rejects(call(), (e: unknown) => e instanceof DelayQError && e.code === code, name);
    }
    assert.throws(() => q.work('t', () => undefined, { concurrency: 0 }), (e: unknown) => e instanceof DelayQError && e.code === 'INVALID_OPTION');
    await q.close();
  });

  it('rejects bad queue options with INVALID_OPTION before anything runs', async () => {
    const bad: [string, DelayQueueOptions][] = [
      ['tickMs 0', { tickMs: 0 }],
      ['tickMs fractional', { tickMs: 1.5 }],
      ['retentionMs negative', { retentionMs: -1 }],
      ['retentionMs NaN', { retentionMs: Number.NaN }],
      ['purgeIntervalMs 0', { purgeIntervalMs: 0 }],
      ['purgeIntervalMs beyond a timer', { purgeIntervalMs: 2 ** 31 }],
      ['purgeBatch 0', { purgeBatch: 0 }],
      ['storeRetryMs a string', { storeRetryMs: '1000' as never }],
      ['loader.pageSize 0', { loader: { pageSize: 0 } }],
      ['loader.maxReadyBacklog negative', { loader: { maxReadyBacklog: -1 } }],
      ['loader.retryMs Infinity', { loader: { retryMs: Number.POSITIVE_INFINITY } }],
      ['limits.maxBatch 0', { limits: { maxBatch: 0 } }],
      ['defaults.ttrMs above limits.maxTtrMs', { limits: { maxTtrMs: 1_000 }, defaults: { ttrMs: 1_001 } }],
      ['defaults.backoff.factor below 1', { defaults: { backoff: { baseMs: 1, factor: 0.5, maxMs: 10, jitter: 0 } } }],
    ];
    for (const [name, options] of bad) {
      await assert.rejects(
        openManual(options),
        (e: unknown) => e instanceof DelayQError && e.code === 'INVALID_OPTION' && e.message.length > 0,
        name,
      );
    }
    const field = await openManual({ loader: { pageSize: 0 } }).catch((e: unknown) => e);
    assert.ok(field instanceof DelayQError && field.details?.['field'] === 'loader.pageSize', 'the error names the option');
  });

  it('accepts the edges of every queue option', async () => {
    const { q } = await openManual({ tickMs: 60_000, retentionMs: 0, purgeIntervalMs: 2 ** 31 - 1, purgeBatch: 1, storeRetryMs: 1, loader: { maxReadyBacklog: 0 } });
    await q.close();
  });

  it('accepts the edges of every limit', async () => {
    const { q } = await openManual();
    await q.schedule({ topic: 'x'.repeat(200), id: 'i'.repeat(256), delayMs: TEN_YEARS });
    await q.schedule({ topic: 'a.b_c:d-E9', runAt: '2030-01-01T00:00:05.250+00:00' });
    await q.schedule({ topic: 't', id: 'iso', runAt: new Date(T0 + 7) });
    assert.equal((await q.get('iso'))?.runAt, T0 + 7);
    await q.schedule({ topic: 't', payload: 'x'.repeat(1024 * 1024 - 2) });
    await q.close();
  });
});
