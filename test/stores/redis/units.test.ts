/** The Redis store's pure parts, without a server: batching, the shard merge, the codec, URLs. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../../src/core/errors.js';
import type { Cluster, Redis } from 'ioredis';
import { DEFAULT_BACKOFF } from '../../../src/core/task/backoff.js';
import { ShardBatcher } from '../../../src/coordination/batcher.js';
import { decodeTask, encodeNewTask } from '../../../src/stores/redis/codec.js';
import type { DueEntry } from '../../../src/stores/redis/commands.js';
import { connect, parseRedisUrl } from '../../../src/stores/redis/connection.js';
import { openRedisStore, resolveOptions } from '../../../src/stores/redis/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { mergeDue } from '../../../src/stores/shared/due-merge.js';
import { shardOf } from '../../../src/coordination/router.js';

describe('redis store units', () => {
  it('coalesces calls made while a shard is busy, and keeps outputs in order', async () => {
    const calls: number[][] = [];
    let release: (() => void) | null = null;
    const batcher = new ShardBatcher<number, number>(async (_shard, items) => {
      calls.push(items);
      if (calls.length === 1) await new Promise<void>((resolve) => (release = resolve));
      return items.map((n) => n * 10);
    }, 100);
    const first = batcher.submit(0, [1]);
    await new Promise((resolve) => setImmediate(resolve));
    const rest = [batcher.submit(0, [2, 3]), batcher.submit(0, [4])];
    release!();
    assert.deepEqual(await first, [10]);
    assert.deepEqual(await Promise.all(rest), [[20, 30], [40]]);
    assert.deepEqual(calls, [[1], [2, 3, 4]]);
  });

  it('rejects every submission of a failed call', async () => {
    const batcher = new ShardBatcher<number, number>(() => Promise.reject(new Error('down')), 10);
    await assert.rejects(() => batcher.submit(3, [1]), /down/);
  });

  it('merges shards by (dueAt, seq) with an exact cursor', async () => {
    const entry = (dueAt: number, seq: number): DueEntry => ({ id: `${dueAt}-${seq}`, kind: 'run', dueAt, seq, topic: 't', receipt: null });
    const shards: DueEntry[][] = [
      [entry(1, 1), entry(5, 4), entry(5, 9)],
      [entry(1, 2), entry(2, 3), entry(5, 5), entry(7, 8)],
      [],
    ];
    const read = async (shard: number, after: { dueAt: number; seq: number } | null, limit: number): Promise<DueEntry[]> =>
      shards[shard]!.filter((e) => !after || e.dueAt > after.dueAt || (e.dueAt === after.dueAt && e.seq > after.seq)).slice(0, limit);
    const all: string[] = [];
    let after: { dueAt: number; seq: number } | null = null;
    for (;;) {
      const page: DueEntry[] = await mergeDue([0, 1, 2], after, 2, read);
      all.push(...page.map((e) => e.id));
      if (page.length < 2) break;
      const last: DueEntry = page[page.length - 1]!;
      after = { dueAt: last.dueAt, seq: last.seq };
    }
    assert.deepEqual(all, ['1-1', '1-2', '2-3', '5-4', '5-5', '5-9', '7-8']);
  });

  it('packs and unpacks a task body', () => {
    const task = { id: 'x', topic: 'orders', payload: '{"a":"ü|,"}', runAt: 1_893_456_000_123, maxAttempts: 7, ttrMs: 30_000, backoff: DEFAULT_BACKOFF };
    const { record, seq } = decodeTask('x', encodeNewTask(task, 42, 1_893_456_000_000));
    assert.equal(seq, 42);
    assert.deepEqual(record, {
      ...task,
      state: 'pending',
      attempts: 0,
      createdAt: 1_893_456_000_000,
      updatedAt: 1_893_456_000_000,
      receipt: null,
      reservedUntil: null,
      lastError: null,
      url: null,
      trace: null,
      priority: 0,
      history: [],
    });
    // A task of priority 0 takes no byte for it; another has it as the 16th field, after empty url and trace fields when it has none.
    assert.equal(encodeNewTask(task, 42, 0).split('|')[0]!.split(',').length, 13);
    for (const [extra, fields] of [
      [{ priority: -100 }, ',,,-100'],
      [{ priority: 7, url: 'https://h.example.com/a,b' }, ',https://h.example.com/a%2Cb,,7'],
      [{ priority: 100, trace: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' }, ',,00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01,100'],
    ] as const) {
      const body = encodeNewTask({ ...task, ...extra }, 42, 0);
      assert.ok(body.split('|')[0]!.endsWith(`orders,${fields}`), body);
      assert.equal(decodeTask('x', body).record.priority, extra.priority);
    }
  });

  it('reads a body of the version before attempt history (errLen alone in field 13) with an empty history', () => {
    // Written by the previous version's nack.lua: error 'boom, |' (8 bytes), then the payload.
    const old = 'p,1,ay8ntc,3,4mo,,ay8nt0,ay8nto,,1,,orders,8|boom, | {"a":1}';
    const { record } = decodeTask('o', old);
    assert.deepEqual([record.lastError, record.payload, record.history, record.attempts], ['boom, | ', '{"a":1}', [], 1]);
  });

  it('reads the history between the error and the payload, with a url after it', () => {
    const entry = (text: string): string => `${Buffer.byteLength(text).toString(36)}:${text}`;
    const history = entry('1,ay8nt0,2s,push:5xx,HTTP 503: é, |') + entry('2,ay8nto,9,acked,');
    const body = `c,2,ay8ntc,3,4mo,,ay8nt0,ay8nto,,1,,orders,4:${Buffer.byteLength(history).toString(36)}:2,https://h.example.com|oops${history}{"a":1}`;
    const { record } = decodeTask('h', body);
    assert.deepEqual([record.lastError, record.payload, record.url], ['oops', '{"a":1}', 'https://h.example.com']);
    assert.deepEqual(record.history, [
      { attempt: 1, startedAt: parseInt('ay8nt0', 36), durationMs: 100, outcome: 'push:5xx', error: 'HTTP 503: é, |' },
      { attempt: 2, startedAt: parseInt('ay8nto', 36), durationMs: 9, outcome: 'acked', error: null },
    ]);
  });

  it('packs a task url only when there is one, its separators escaped, and reads it back exactly', () => {
    const base = { id: 'u', topic: 'orders', payload: '{"a":"|,%"}', runAt: 5, maxAttempts: 1, ttrMs: 1, backoff: DEFAULT_BACKOFF };
    const plain = encodeNewTask(base, 1, 1);
    const url = 'https://h.example.com/a,b|c%2C?x=%7C';
    const withUrl = encodeNewTask({ ...base, url }, 1, 1);
    assert.equal(withUrl.length, plain.length + 1 + url.length + 2 * 4, 'a comma, the url, 4 escapes of 2 more bytes each');
    assert.equal(withUrl.slice(0, withUrl.indexOf('|')).split(',').length, 14);
    assert.equal(decodeTask('u', withUrl).record.url, url);
    assert.equal(decodeTask('u', withUrl).record.payload, base.payload);
    assert.equal(decodeTask('u', plain).record.url, null);
  });

  it('packs a trace context only when there is one, after an empty url field without a url, and reads both back exactly', () => {
    const base = { id: 't', topic: 'orders', payload: '{"a":"|,%"}', runAt: 5, maxAttempts: 1, ttrMs: 1, backoff: DEFAULT_BACKOFF };
    const trace = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01 a=b|c%2C,d=e f';
    const traced = encodeNewTask({ ...base, trace }, 1, 1);
    const header = traced.slice(0, traced.indexOf('|')).split(',');
    assert.deepEqual([header.length, header[13]], [15, ''], 'an empty url field, then the trace');
    assert.deepEqual([decodeTask('t', traced).record.trace, decodeTask('t', traced).record.url, decodeTask('t', traced).record.payload], [trace, null, base.payload]);
    const url = 'https://h.example.com/a,b';
    const both = decodeTask('t', encodeNewTask({ ...base, url, trace }, 1, 1)).record;
    assert.deepEqual([both.url, both.trace], [url, trace]);
    assert.equal(decodeTask('t', encodeNewTask(base, 1, 1)).record.trace, null);
  });

  it('stores the default backoff policy as nothing, and reads it back', () => {
    const task = { id: 'y', topic: 't', payload: 'null', runAt: 5, maxAttempts: 1, ttrMs: 1, backoff: DEFAULT_BACKOFF };
    const body = encodeNewTask(task, 1, 1);
    assert.ok(body.includes(',,'), body);
    assert.deepEqual(decodeTask('y', body).record.backoff, DEFAULT_BACKOFF);
  });

  it('routes an id to a stable shard', () => {
    assert.equal(shardOf('order-1', 16), shardOf('order-1', 16));
    const seen = new Set(Array.from({ length: 1_000 }, (_, i) => shardOf(`id-${i}`, 16)));
    assert.equal(seen.size, 16);
  });

  it('parses store URLs', () => {
    assert.deepEqual(parseRedisUrl('redis://127.0.0.1:6380/2').nodes, [{ host: '127.0.0.1', port: 6380 }]);
    assert.equal(parseRedisUrl('redis://127.0.0.1:6380/2').options.db, 2);
    const cluster = parseRedisUrl('redis+cluster://a:7000,b:7001');
    assert.equal(cluster.cluster, true);
    assert.deepEqual(cluster.nodes, [
      { host: 'a', port: 7000 },
      { host: 'b', port: 7001 },
    ]);
    assert.throws(() => parseRedisUrl('redis+cluster://'), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'));
    assert.throws(() => parseRedisUrl('redis://h:1/x'), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'));
  });

  it('reads the namespace, shards and horizon from the URL query, and refuses what it does not know', async () => {
    assert.deepEqual(parseRedisUrl('redis://127.0.0.1:6380/2?prefix=tenant-a&shards=4').storeOptions, { prefix: 'tenant-a', shards: 4 });
    assert.equal(parseRedisUrl('redis://127.0.0.1:6380/2?prefix=tenant-a').options.db, 2);
    const cluster = parseRedisUrl('redis+cluster://a:7000,b:7001?prefix=staging&horizonMs=30000');
    assert.deepEqual(cluster.nodes.map((n) => n.port), [7000, 7001]);
    assert.deepEqual(cluster.storeOptions, { prefix: 'staging', horizonMs: 30_000 });
    assert.deepEqual(parseRedisUrl('redis://h:1').storeOptions, {});
    for (const bad of ['redis://h:1?namespace=a', 'redis://h:1?shards=-1', 'redis+cluster://a:1?shards=four'])
      assert.throws(() => parseRedisUrl(bad), (e: unknown) => isDelayQError(e, 'INVALID_STORE_URL'), bad);
    // Checked before any connection is made: nothing listens on port 1.
    await assert.rejects(openRedisStore('redis://127.0.0.1:1?prefix=a', { clock: storeSystemClock, prefix: 'b' }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
    await assert.rejects(openRedisStore('redis://127.0.0.1:1?shards=0', { clock: storeSystemClock }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
  });

  it('connects without ioredis auto-pipelining, on one Redis and on a cluster', () => {
    // Auto-pipelining keeps one pipeline per node in flight, so Node and Redis take turns
    // (ADR 0003). Nothing is contacted here.
    const single = connect(parseRedisUrl('redis://127.0.0.1:1'), 0);
    const cluster = connect(parseRedisUrl('redis+cluster://127.0.0.1:1'), 0);
    try {
      assert.equal(single.options.enableAutoPipelining, false);
      assert.equal(cluster.options.enableAutoPipelining, false);
      assert.equal((single as Redis).options.commandTimeout, undefined, 'callTimeoutMs 0: no limit');
    } finally {
      single.disconnect();
      cluster.disconnect();
    }
  });

  it('callTimeoutMs: ioredis commandTimeout on every connection, duplicates included; refused out of range or not above waitTimeoutMs', async () => {
    const single = connect(parseRedisUrl('redis://127.0.0.1:1'), 2_500);
    const cluster = connect(parseRedisUrl('redis+cluster://127.0.0.1:1'), 2_500);
    const copy = single.duplicate();
    try {
      assert.equal((single as Redis).options.commandTimeout, 2_500);
      assert.equal((copy as Redis).options.commandTimeout, 2_500, 'the subscriber and the probe connections are duplicates');
      assert.equal((cluster as Cluster).options.redisOptions?.commandTimeout, 2_500);
    } finally {
      for (const c of [single, cluster, copy]) c.disconnect();
    }
    assert.equal(parseRedisUrl('redis://h:1?callTimeoutMs=2500').storeOptions.callTimeoutMs, 2_500);
    assert.equal(resolveOptions({}).callTimeoutMs, 10_000);
    assert.equal(resolveOptions({ callTimeoutMs: 0, waitReplicas: 1 }).callTimeoutMs, 0);
    for (const bad of [{ callTimeoutMs: 50 }, { callTimeoutMs: 3_600_001 }, { callTimeoutMs: 1.5 }, { callTimeoutMs: 1_000, waitReplicas: 1, waitTimeoutMs: 1_000 }])
      assert.throws(() => resolveOptions(bad), (e: unknown) => isDelayQError(e, 'INVALID_OPTION') && /callTimeoutMs/.test((e as Error).message), JSON.stringify(bad));
    await assert.rejects(openRedisStore('redis://127.0.0.1:1?callTimeoutMs=2000', { clock: storeSystemClock, callTimeoutMs: 3_000 }), (e: unknown) => isDelayQError(e, 'INVALID_OPTION'));
  });
});
