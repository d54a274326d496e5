/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * Rows delayq cannot read, written with each store's own driver as someone with table rights
 * would (issue 45): a payload that is not JSON, an id with spaces, on Redis a body that is
 * not one at all. Before, `GET /v1/tasks?topic=` answered 500, and every reserve of the topic
 * too, and the good tasks reserved in the same statement lost their attempt and sat out their
 * ttr. Now reading such a row (list, get, reserve, push) moves it to dead with lastError
 * `UNDECODABLE_ROW: <why>`, and the others of the same call are delivered with valid
 * attempts and receipts.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import pg from 'pg';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { buildKeyspace } from '../../src/stores/redis/keys.js';
import { shardOf } from '../../src/coordination/router.js';
import { dropSchema, freshSchema, PG_URL, storeUrl } from '../helpers/postgres.js';
import { startRedis, type RedisServer } from '../helpers/redis-servers.js';
import { startReceiver, type Receiver } from '../push/receiver.js';

const BAD_ID = 'bad id with spaces';

/** A store, and how to spoil its rows with its own driver while no queue has it open. */
interface Backing {
  readonly name: string;
  readonly url: string;
  /** Replaces task `id`'s payload with text that is not JSON. */
  spoilPayload(id: string): Promise<void>;
  /** Gives task `id` an id delayq never writes. */
  spoilId(id: string, to: string): Promise<void>;
  /** Writes a row that is not a task body at all (Redis only). */
  garbage?(id: string): Promise<void>;
  close(): Promise<void>;
}

const dir = mkdtempSync(join(tmpdir(), 'delayq-rows-'));
let redis: RedisServer | undefined;
let receiver: Receiver;
before(async () => {
  redis = await startRedis();
  receiver = await startReceiver();
});
after(async () => {
  await receiver.close();
  await redis?.stop();
  redis?.remove();
  rmSync(dir, { recursive: true, force: true });
});

function sqliteBacking(): Backing {
  const path = join(dir, `${Math.random().toString(36).slice(2)}.db`);
  const run = async (sql: string, ...values: string[]): Promise<void> => {
    const db = new Database(path);
    try {
      db.prepare(sql).run(...values);
    } finally {
      db.close();
    }
  };
  return {
    name: 'sqlite',
    url: `sqlite:${path}`,
    spoilPayload: (id) => run("UPDATE tasks SET payload = 'not json{' WHERE id = ?", id),
    spoilId: (id, to) => run('UPDATE tasks SET id = ? WHERE id = ?', to, id),
    close: async () => undefined,
  };
}

function postgresBacking(): Backing {
  const schema = freshSchema('rows');
  const run = async (sql: string, values: string[]): Promise<void> => {
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    try {
      await client.query(sql.replaceAll('S.', `"${schema}".`), values);
    } finally {
      await client.end();
    }
  };
  return {
    name: 'postgres',
    url: storeUrl(schema),
    spoilPayload: (id) => run("UPDATE S.tasks SET payload = 'not json{' WHERE id = $1", [id]),
    spoilId: (id, to) => run('UPDATE S.tasks SET id = $1 WHERE id = $2', [to, id]),
    close: () => dropSchema(schema),
  };
}

function redisBacking(): Backing {
  const prefix = `rows${Math.random().toString(36).slice(2, 8)}`;
  const keys = buildKeyspace(prefix, 16);
  const pool = (id: string): string => keys.shards[shardOf(id, 16)]!.pool;
  const client = new Redis({ host: '127.0.0.1', port: redis!.port });
  return {
    name: 'redis',
    url: `${redis!.url}?prefix=${prefix}`,
    spoilPayload: async (id) => {
      const body = (await client.hget(pool(id), id))!;
      await client.hset(pool(id), id, `${body.slice(0, body.indexOf('|') + 1)}not json{`);
    },
    // The body of task `id` moved to another field name (not in the indexes: list and get find it).
    spoilId: async (id, to) => {
      await client.hset(pool(to), to, (await client.hget(pool(id), id))!);
      await client.hdel(pool(id), id);
    },
    garbage: async (id) => void (await client.hset(pool(id), id, 'not a task body at all')),
    close: async () => client.disconnect(),
  };
}

for (const make of [sqliteBacking, postgresBacking, redisBacking]) {
  describe(`rows delayq cannot read: ${make.name.replace('Backing', '')}`, () => {
    it('list, get and reserve quarantine them to dead (UNDECODABLE_ROW); the others of the same reserve keep their attempt and receipt', async () => {
      const backing = make();
      let q = await DelayQueue.open({ store: backing.url });
      try {
        for (const id of ['good-1', 'bad-json', 'bad-id', 'good-2']) await q.schedule({ id, topic: 'mixed', payload: { id } });
        await q.close();
        await backing.spoilPayload('bad-json');
        await backing.spoilId('bad-id', BAD_ID);
        await backing.garbage?.('garbage-1');
        q = await DelayQueue.open({ store: backing.url });
        const app = await buildApp({ queue: q, logger: false });
        await app.listen({ host: '127.0.0.1', port: 0 });
        const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
        const http = async (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> => {
          const response = await fetch(base + path, { method, headers: method === 'POST' ? { 'content-type': 'application/json' } : {}, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
          return { status: response.status, body: await response.json() };
        };
        try {
          // One reserve meets the spoilt row with the good ones (SQL stores: in one statement).
          const reserved = await http('POST', '/v1/topics/mixed/reserve', { max: 10, waitMs: 5_000 });
          assert.equal(reserved.status, 200, JSON.stringify(reserved.body));
          let tasks: any[] = reserved.body.tasks;
          for (let i = 0; i < 20 && tasks.length < 2; i++) tasks = [...tasks, ...(await http('POST', '/v1/topics/mixed/reserve', { max: 10, waitMs: 1_000 })).body.tasks];
          assert.deepEqual(tasks.map((t): [string, number] => [String(t.id), Number(t.attempt)]).sort(), [['good-1', 1], ['good-2', 1]]);
          for (const task of tasks) assert.equal((await http('POST', `/v1/tasks/${task.id}/ack`, { receipt: task.receipt })).body.acked, true, `${task.id}: its receipt is valid`);

          const spoilt = await http('GET', '/v1/tasks/bad-json');
          assert.equal(spoilt.status, 200);
          assert.equal(spoilt.body.state, 'dead');
          assert.equal(spoilt.body.payload, null);
          assert.equal(spoilt.body.lastError, 'UNDECODABLE_ROW: its payload is not JSON');

          const listed = await http('GET', '/v1/tasks?limit=100');
          assert.equal(listed.status, 200, JSON.stringify(listed.body));
          const byId = new Map<string, any>(listed.body.tasks.map((t: any): [string, any] => [t.id, t]));
          assert.equal(byId.get(BAD_ID)?.state, 'dead');
          assert.equal(byId.get(BAD_ID)?.lastError, 'UNDECODABLE_ROW: its id is not a name (A-Z a-z 0-9 . _ : -)');
          if (backing.garbage) assert.match(byId.get('garbage-1')?.lastError ?? '', /^UNDECODABLE_ROW: /);
          assert.equal((await http('GET', '/v1/tasks?topic=mixed&limit=100')).status, 200);
          // The store moved them: read again, they are dead in its own rows and counters.
          const again = new Map<string, string>((await http('GET', '/v1/tasks?limit=100')).body.tasks.map((t: any): [string, string] => [t.id, t.state]));
          assert.equal(again.get('bad-json'), 'dead');
          assert.equal(again.get(BAD_ID), 'dead');
          const counts = (await http('GET', '/v1/stats')).body.counts;
          assert.equal(counts.reserved, 0);
          assert.equal(counts.pending, 0);
          assert.ok(counts.dead >= 1, JSON.stringify(counts));
        } finally {
          await app.close();
        }
      } finally {
        await q.close();
        await backing.close();
      }
    });

    it('push: a spoilt row of a pushed topic is quarantined, the good ones are pushed', async () => {
      const backing = make();
      let q = await DelayQueue.open({ store: backing.url, push: { allow: ['127.0.0.1/32'] } });
      try {
        await q.setPush('hooked', { url: receiver.url });
        await q.close();
        q = await DelayQueue.open({ store: backing.url, push: { allow: ['127.0.0.1/32'] } });
        // Not due until the spoiling is done: the queue is closed meanwhile.
        await q.schedule({ id: 'push-good', topic: 'hooked', payload: { id: 'push-good' }, delayMs: 2_000 });
        await q.schedule({ id: 'push-bad', topic: 'hooked', payload: { id: 'push-bad' }, delayMs: 2_000 });
        await q.close();
        await backing.spoilPayload('push-bad');
        const arrived = receiver.received.length;
        q = await DelayQueue.open({ store: backing.url, push: { allow: ['127.0.0.1/32'] } });
        await Promise.race([receiver.arrivals(arrived + 1), new Promise((resolve) => setTimeout(resolve, 15_000))]);
        let bad = await q.get('push-bad');
        for (let i = 0; i < 100 && bad?.state !== 'dead'; i++) {
          await new Promise((resolve) => setTimeout(resolve, 50));
          bad = await q.get('push-bad');
        }
        assert.deepEqual(receiver.received.slice(arrived).map((r) => (JSON.parse(r.body) as { id: string }).id), ['push-good']);
        assert.equal(bad?.state, 'dead');
        assert.equal(bad.lastError, 'UNDECODABLE_ROW: its payload is not JSON');
      } finally {
        await q.close();
        await backing.close();
      }
    });
  });
}
