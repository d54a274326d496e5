import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, parseServerConfig } from '../../src/server/config.js';
import { runServe } from '../../src/server/main.js';

const problems = (flags: Record<string, string | boolean | undefined>, env: NodeJS.ProcessEnv = {}): string[] => {
  try {
    parseServerConfig(flags, env);
    return [];
  } catch (error) {
    assert.ok(error instanceof ConfigError);
    return [...error.problems];
  }
};

describe('server config', () => {
  it('defaults: sqlite:./delayq.db on 127.0.0.1:7420, no token', () => {
    const config = parseServerConfig({}, {});
    assert.equal(config.store, 'sqlite:./delayq.db');
    assert.equal(config.host, '127.0.0.1');
    assert.equal(config.port, 7420);
    assert.equal(config.token, undefined);
    assert.equal(config.limits.maxPayloadBytes, 1024 * 1024);
    assert.equal(config.limits.maxBatch, 10_000);
    assert.equal(config.limits.maxWaitMs, 60_000);
  });

  it('reads DELAYQ_* variables; flags win', () => {
    const env = { DELAYQ_STORE: 'memory', DELAYQ_PORT: '8000', DELAYQ_TOKEN: 't', DELAYQ_MAX_BATCH: '50', DELAYQ_HOST: '0.0.0.0' };
    const config = parseServerConfig({ port: '9000' }, env);
    assert.deepEqual([config.store, config.port, config.token, config.limits.maxBatch, config.host], ['memory', 9000, 't', 50, '0.0.0.0']);
  });

  it('refuses a public host without a token unless told explicitly', () => {
    assert.match(problems({ host: '0.0.0.0' }).join(), /refusing to listen on 0\.0\.0\.0 without a token/);
    assert.deepEqual(problems({ host: '0.0.0.0', allowPublic: true }), []);
    assert.deepEqual(problems({ host: '0.0.0.0' }, { DELAYQ_ALLOW_PUBLIC: '1' }), []);
    assert.deepEqual(problems({ host: '0.0.0.0', token: 'x' }), []);
    for (const host of ['localhost', '127.0.0.2', '::1']) assert.deepEqual(problems({ host }), [], host);
  });

  it('reports every problem at once, naming the flag and the variable', () => {
    const found = problems({ port: '70000', store: 'mysql://x', logLevel: 'loud' }, { DELAYQ_MAX_WAIT_MS: '120000', DELAYQ_ALLOW_PUBLIC: 'maybe' });
    assert.equal(found.length, 5, found.join('\n'));
    assert.ok(found.some((p) => p.startsWith('--port / DELAYQ_PORT')));
    assert.ok(found.some((p) => p.startsWith('--store / DELAYQ_STORE')));
    assert.ok(found.some((p) => p.startsWith('--max-wait-ms / DELAYQ_MAX_WAIT_MS')));
  });

  it('reads the push allowlist as comma-separated addresses or CIDRs with optional ports, flag over variable', () => {
    assert.deepEqual(parseServerConfig({}, {}).pushAllow, []);
    assert.deepEqual(parseServerConfig({}, { DELAYQ_PUSH_ALLOW: '127.0.0.1/32, ::1/128' }).pushAllow, ['127.0.0.1/32', '::1/128']);
    assert.deepEqual(parseServerConfig({ pushAllow: '10.0.0.0/8' }, { DELAYQ_PUSH_ALLOW: '127.0.0.1/32' }).pushAllow, ['10.0.0.0/8']);
    assert.deepEqual(parseServerConfig({ pushAllow: '127.0.0.1:8080,[::1]:9000,10.0.0.0/8:443' }, {}).pushAllow, ['127.0.0.1:8080', '[::1]:9000', '10.0.0.0/8:443']);
    assert.match(problems({ pushAllow: 'localhost' }).join(), /--push-allow \/ DELAYQ_PUSH_ALLOW: "localhost" is not an allowlist entry: "localhost" is not an IP address/);
    const found = problems({ pushAllow: '127.0.0.1:0,[::1]:9000,[::1' });
    assert.equal(found.length, 2, found.join('\n'));
    assert.match(found[0] ?? '', /^--push-allow \/ DELAYQ_PUSH_ALLOW: "127\.0\.0\.1:0" .*port must be 1 to 65535/);
    assert.match(found[1] ?? '', /"\[::1" .*a \[ without its \]/);
  });

  it('reads the task defaults and retention from flags and variables, checked as the engine checks them', () => {
    assert.deepEqual(parseServerConfig({}, {}).engine, {});
    const config = parseServerConfig({ defaultTtrMs: '5000', defaultBackoffFactor: '1.5' }, { DELAYQ_RETENTION_MS: '3600000', DELAYQ_DEFAULT_MAX_ATTEMPTS: '9', DELAYQ_DEFAULT_BACKOFF_JITTER: '0' });
    assert.deepEqual(config.engine, { retentionMs: 3_600_000, defaults: { ttrMs: 5_000, maxAttempts: 9, backoff: { factor: 1.5, jitter: 0 } } });
    assert.deepEqual(problems({ defaultBackoffJitter: '2' }), ['--default-backoff-jitter / DELAYQ_DEFAULT_BACKOFF_JITTER: expected a number from 0 to 1 (got "2")']);
    // A bound that depends on another value is the engine resolver's: the message names the flag all the same.
    assert.match(problems({ defaultBackoffBaseMs: '5000', defaultBackoffMaxMs: '10' }).join(), /^--default-backoff-max-ms \/ DELAYQ_DEFAULT_BACKOFF_MAX_MS: backoff\.maxMs: must be an integer >= baseMs/);
    assert.match(problems({ defaultTtrMs: String(25 * 3_600_000) }).join(), /^--default-ttr-ms \/ DELAYQ_DEFAULT_TTR_MS: defaults\.ttrMs: must be an integer from 1 to 86400000/);
  });

  it('passes the store options given to the store, and refuses one the store named does not read', () => {
    assert.deepEqual(parseServerConfig({}, {}).storeOptions, {});
    assert.deepEqual(parseServerConfig({ store: 'postgres://u@h/db', poolSize: '8' }, { DELAYQ_SCHEMA: 'jobs', DELAYQ_CALL_TIMEOUT_MS: '0' }).storeOptions, { schema: 'jobs', poolSize: 8, callTimeoutMs: 0 });
    assert.deepEqual(parseServerConfig({ store: 'redis://h:6379', shards: '4' }, {}).storeOptions, { shards: 4 });
    assert.deepEqual(parseServerConfig({ synchronous: 'FULL' }, {}).storeOptions, { synchronous: 'FULL' });
    assert.deepEqual(problems({ store: 'redis://h:6379', schema: 'jobs' }), ['--schema / DELAYQ_SCHEMA: schema: read only by postgres stores, not by a redis store']);
    assert.deepEqual(problems({ store: 'memory' }, { DELAYQ_HORIZON_MS: '60000' }), ['--horizon-ms / DELAYQ_HORIZON_MS: horizonMs: read only by sqlite, redis and postgres stores, not by a memory store']);
    assert.deepEqual(problems({ store: 'postgres://u@h/db', poolSize: '500' }), ['--pool-size / DELAYQ_POOL_SIZE: expected an integer from 1 to 100 (got "500")']);
  });

  it('delayq serve with an option its store does not read: the message on stderr, exit code 2, nothing started', async () => {
    const written: string[] = [];
    const write = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((chunk: string) => written.push(String(chunk)) > 0);
    let code: number;
    try {
      code = await runServe({ store: 'redis://127.0.0.1:1', schema: 'jobs', port: '0' }, {});
    } finally {
      process.stderr.write = write;
    }
    assert.equal(code, 2);
    assert.deepEqual(written, ['delayq serve: invalid configuration: --schema / DELAYQ_SCHEMA: schema: read only by postgres stores, not by a redis store\n']);
  });
});
