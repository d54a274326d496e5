/**
 * The last doors of a server without a token (issue 45), on a bare socket so every header
 * goes out as written:
 * - DNS rebinding: `Host: rebind.attacker.example:PORT` with a matching Origin and
 *   `Sec-Fetch-Site: same-origin` paused a schedule. Now only loopback Host names, and those
 *   given with --allow-host, reach a guarded route (421 HOST_NOT_ALLOWED otherwise); with a
 *   token, Host is not checked; the public routes answer any Host.
 * - A request without Host got Node's empty 400; now the envelope.
 * - `/readyz` without a token said which host, port, database, schema and role failed; now
 *   `{status}` alone, the reason in the log and, with the token, in the body.
 */
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { MemoryTasks } from '../../src/stores/memory/memory-tasks.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp, type AppOptions } from '../../src/server/app.js';
import { ConfigError, parseServerConfig } from '../../src/server/config.js';
import { isEnvelope, rawRequest, type RawAnswer } from '../helpers/raw-http.js';

interface Served {
  readonly port: number;
  readonly queue: DelayQueue;
  readonly app: FastifyInstance;
  readonly logs: { level: number; msg: string; reason?: string }[];
}

async function serve(options: Partial<AppOptions> = {}, store?: MemoryStore): Promise<Served> {
  const logs: Served['logs'] = [];
  const logger = pino({ level: 'debug' }, { write: (line: string) => void logs.push(JSON.parse(line) as Served['logs'][number]) });
  const queue = await DelayQueue.open(store === undefined ? {} : { store });
  const app = await buildApp({ queue, logger, ...options });
  await app.listen({ host: '127.0.0.1', port: 0 });
  return { port: (app.server.address() as AddressInfo).port, queue, app, logs };
}

async function stop(served: Served | undefined): Promise<void> {
  await served?.app.close();
  await served?.queue.close();
}

const code = (answer: RawAnswer): string | undefined => (isEnvelope(answer.text) ? (JSON.parse(answer.text) as { error: { code: string } }).error.code : undefined);

describe('a server without a token answers only its own Host names (DNS rebinding)', () => {
  let s: Served;
  before(async () => {
    s = await serve({ allowHosts: ['delayq.internal'] });
    await s.queue.schedules.upsert('s1', { topic: 'x', everyMs: 60_000 });
  });
  after(() => stop(s));

  it('refuses a rebound name with a matching Origin and Sec-Fetch-Site: 421 HOST_NOT_ALLOWED, and the schedule stays as it was', async () => {
    const host = `rebind.attacker.example:${s.port}`;
    const answer = await rawRequest(s.port, {
      method: 'POST',
      target: '/v1/schedules/s1/pause',
      headers: { host, origin: `http://${host}`, 'sec-fetch-site': 'same-origin', 'content-type': 'application/json' },
    });
    assert.equal(answer.status, 421, answer.text);
    assert.equal(code(answer), 'HOST_NOT_ALLOWED');
    assert.equal((await s.queue.schedules.get('s1'))?.paused, false);
    for (const target of ['/v1/stats', '/v1/tasks', '/nope', '/metrics']) assert.equal((await rawRequest(s.port, { method: 'GET', target, headers: { host } })).status, 421, target);
  });

  it('answers localhost, 127.0.0.1, [::1] (with or without a port, any case, a trailing dot) and the --allow-host names', async () => {
    for (const host of ['localhost', `localhost:${s.port}`, 'LOCALHOST.', '127.0.0.1', `127.0.0.1:${s.port}`, '127.1.2.3', '[::1]', `[::1]:${s.port}`, 'delayq.internal', `DELAYQ.internal:${s.port}`])
      assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { host } })).status, 200, host);
  });

  it('refuses other names, addresses and spellings', async () => {
    for (const host of ['localhost.attacker.example', 'attacker.example', '127.0.0.1.nip.io', '10.0.0.5', '[::2]', '0.0.0.0', 'delayq.internal.example', 'localhost:1@attacker.example', ''])
      assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { host } })).status, 421, JSON.stringify(host));
  });

  it('a proxy\'s X-Forwarded-Host must name this server too', async () => {
    const ask = (forwarded: string): Promise<RawAnswer> => rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { host: '127.0.0.1', 'x-forwarded-host': forwarded } });
    assert.equal((await ask('delayq.internal')).status, 200);
    assert.equal((await ask('attacker.example')).status, 421);
    assert.equal((await ask('localhost, attacker.example')).status, 421);
  });

  it('the public routes answer any Host: probes send the pod\'s address', async () => {
    for (const target of ['/healthz', '/readyz', '/openapi.json', '/ui/'])
      assert.equal((await rawRequest(s.port, { method: 'GET', target, headers: { host: '10.1.2.3:7420' } })).status, 200, target);
  });

  it('a request without Host: 400 in the envelope (HTTP/1.1); HTTP/1.0 without Host reaches the public routes', async () => {
    const missing = await rawRequest(s.port, { method: 'GET', target: '/v1/stats', noHost: true });
    assert.equal(missing.status, 400);
    assert.equal(code(missing), 'BAD_REQUEST');
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/healthz', noHost: true, version: '1.0' })).status, 200);
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/stats', noHost: true, version: '1.0' })).status, 421);
  });
});

describe('a server with a token', () => {
  let s: Served;
  before(async () => {
    s = await serve({ token: 'door-token' });
  });
  after(() => stop(s));

  it('does not check Host: the token decides', async () => {
    const headers = { host: 'rebind.attacker.example', authorization: 'Bearer door-token' };
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers })).status, 200);
    assert.equal((await rawRequest(s.port, { method: 'GET', target: '/v1/stats', headers: { host: 'rebind.attacker.example' } })).status, 401);
  });

  it('a request without Host is 400 in the envelope here too', async () => {
    const missing = await rawRequest(s.port, { method: 'GET', target: '/v1/stats', noHost: true, headers: { authorization: 'Bearer door-token' } });
    assert.deepEqual([missing.status, code(missing)], [400, 'BAD_REQUEST']);
  });
});

describe('/readyz says why only to a request with the token', () => {
  /** A tasks role that fails as a PostgreSQL store refused by its server would, naming where. */
  class RefusedTasks extends MemoryTasks {
    failing = false;
    override async get(id: string): Promise<null> {
      if (this.failing) throw new Error('postgres store postgres://app:hunter2@db.internal:5432/prod?sslmode=require (schema billing): role "delayq_app" is not permitted to log in');
      return (await super.get(id)) as null;
    }
  }

  for (const token of [undefined, 'ready-token']) {
    it(`${token === undefined ? 'without a token' : 'with a token'}: {status} alone to everyone else; the reason, redacted, in the log`, async () => {
      const store = new MemoryStore((assertOpen) => new RefusedTasks(assertOpen));
      const s = await serve(token === undefined ? {} : { token }, store);
      try {
        store.tasks.failing = true;
        const answer = await rawRequest(s.port, { method: 'GET', target: '/readyz' });
        assert.equal(answer.status, 503);
        assert.deepEqual(JSON.parse(answer.text), { status: 'not ready' });
        const logged = s.logs.find((line) => line.msg === 'readyz: not ready');
        assert.match(logged?.reason ?? '', /role "delayq_app" is not permitted to log in/);
        assert.doesNotMatch(logged?.reason ?? '', /hunter2|sslmode/, 'redacted');
        if (token !== undefined) {
          const told = await rawRequest(s.port, { method: 'GET', target: '/readyz', headers: { authorization: `Bearer ${token}` } });
          const body = JSON.parse(told.text) as { status: string; error: { code: string; message: string } };
          assert.deepEqual([told.status, body.status, body.error.code], [503, 'not ready', 'STORE_UNAVAILABLE']);
          assert.match(body.error.message, /not permitted to log in/);
          assert.doesNotMatch(body.error.message, /hunter2/);
        }
        store.tasks.failing = false;
        assert.deepEqual(JSON.parse((await rawRequest(s.port, { method: 'GET', target: '/readyz' })).text), { status: 'ready' });
      } finally {
        await stop(s);
      }
    });
  }
});

describe('--allow-host', () => {
  it('takes host names and [IPv6] addresses; refuses ports, paths and junk; the listening address is allowed too', () => {
    const config = parseServerConfig({ allowHost: 'delayq.internal, Queue.Example.com.,[fd00::1]', host: '10.0.0.5', allowPublic: true }, {});
    assert.deepEqual(config.allowHosts, ['delayq.internal', 'queue.example.com.', '[fd00::1]', '10.0.0.5']);
    assert.deepEqual(parseServerConfig({}, { DELAYQ_ALLOW_HOST: 'a.example' }).allowHosts, ['a.example']);
    for (const bad of ['a.example:80', 'http://a.example', 'a b', 'a/b', '-a.example', '*.example'])
      assert.throws(() => parseServerConfig({ allowHost: bad }, {}), (error: unknown) => error instanceof ConfigError && /--allow-host/.test(error.message), bad);
  });
});
