// A whole session against the real `delayq serve` process, logging everything (trace level,
// every request), with canary secrets wherever a user puts one: the token, a wrong token, a
// push URL's query, a task URL's query, a webhook secret, a request query, a store URL's
// password. None may appear in anything the process writes.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQClient } from '../../src/client/index.js';
import { answerWith, closedPort, startReceiver, type Receiver } from '../push/receiver.js';
import { rawRequest } from '../helpers/raw-http.js';
import { runCliProcess, spawnServer, type SpawnedServer } from '../helpers/service-process.js';

const TOKEN = 'CANARY-TOKEN-7d1f0a';
const WRONG_TOKEN = 'CANARY-WRONG-TOKEN-42aa';
const SUBSCRIPTION_QUERY = 'CANARY-SUBSCRIPTION-QUERY-90b3';
const TASK_QUERY = 'CANARY-TASK-QUERY-c55e';
const DEAD_URL_QUERY = 'CANARY-DEAD-URL-QUERY-1e2f';
const LIST_QUERY = 'CANARY-LIST-QUERY-0f0f';
const SECRET_BYTES = Buffer.from('CANARY-WEBHOOK-SECRET-0123456789');
const WEBHOOK_SECRET = `whsec_${SECRET_BYTES.toString('base64')}`;
const DEFAULT_SECRET_BYTES = Buffer.from('CANARY-DEFAULT-PUSH-SECRET-abcde');
const DEFAULT_SECRET = `whsec_${DEFAULT_SECRET_BYTES.toString('base64')}`;
const STORE_PASSWORD = 'CANARY-STORE-PASSWORD-5a5a';

const CANARIES = [TOKEN, WRONG_TOKEN, SUBSCRIPTION_QUERY, TASK_QUERY, DEAD_URL_QUERY, LIST_QUERY, WEBHOOK_SECRET, SECRET_BYTES.toString('base64'), DEFAULT_SECRET, DEFAULT_SECRET_BYTES.toString('base64'), STORE_PASSWORD];

function assertNoCanary(output: string): void {
  for (const canary of CANARIES) assert.ok(!output.includes(canary), `${canary} is in the output:\n${output.split('\n').find((line) => line.includes(canary))}`);
}

describe('no secret reaches the logs', () => {
  let server: SpawnedServer;
  let receiver: Receiver;
  let client: DelayQClient;

  before(async () => {
    receiver = await startReceiver();
    server = await spawnServer(['--push-allow', '127.0.0.1/32'], { DELAYQ_TOKEN: TOKEN, DELAYQ_PUSH_SECRET: DEFAULT_SECRET, DELAYQ_LOG_LEVEL: 'trace', DELAYQ_LOG_REQUESTS: '1' });
    client = new DelayQClient({ url: server.address, token: TOKEN });
  });
  after(async () => {
    await server.stop();
    await receiver.close();
  });

  it('a full session: subscriptions, pushes that fail and succeed, tasks with urls, bad tokens, queries', async () => {
    // The first pushes fail (500, logged as failures), the rest succeed.
    let answered = 0;
    receiver.answer = (request, response) => (answered++ < 2 ? answerWith(500)(request, response) : answerWith(204)(request, response));
    await client.setPush('canary', { url: `${receiver.url}?token=${SUBSCRIPTION_QUERY}`, secret: WEBHOOK_SECRET });
    assert.equal((await client.getPush('canary'))?.topic, 'canary');
    for (let i = 0; i < 3; i++) await client.schedule({ id: `c${i}`, topic: 'canary', payload: { i }, maxAttempts: 5, backoff: { baseMs: 10, factor: 1, maxMs: 10, jitter: 0 } });
    await client.schedule({ id: 'own-url', topic: 'elsewhere', url: `${receiver.url}?sig=${TASK_QUERY}` });
    // A receiver that is not there: a connection failure, logged with its url.
    await client.schedule({ id: 'nowhere', topic: 'elsewhere', url: `http://127.0.0.1:${await closedPort()}/hook?key=${DEAD_URL_QUERY}`, maxAttempts: 1 });
    await client.list({ topic: 'canary', afterId: LIST_QUERY });
    await client.schedules.upsert('every-hour', { topic: 'canary', everyMs: 3_600_000 });
    const refused = await rawRequest(Number(new URL(server.address).port), { method: 'GET', target: `/v1/stats?q=${LIST_QUERY}`, headers: { authorization: `Bearer ${WRONG_TOKEN}` } });
    assert.equal(refused.status, 401);
    await rawRequest(Number(new URL(server.address).port), { method: 'GET', target: `/nowhere?token=${LIST_QUERY}` });

    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      const states = await Promise.all(['c0', 'c1', 'c2', 'own-url', 'nowhere'].map(async (id) => (await client.get(id))?.state));
      if (states.every((state) => state === 'completed' || state === 'dead')) break;
      await sleep(50);
    }
    assert.equal((await client.get('c2'))?.state, 'completed');
    assert.equal((await client.get('nowhere'))?.state, 'dead');
    await client.deletePush('canary');
    assert.equal(await server.stop('SIGTERM'), 0);

    const output = server.logs.join('\n');
    // The log did see all of it (or this test proves nothing): requests, subscriptions, push failures.
    assert.match(output, /"url":"\/v1\/tasks"/);
    assert.match(output, /push: topic subscribed/);
    assert.match(output, /"url":"http:\/\/127\.0\.0\.1:\d+\/hook\?<redacted>"/);
    assertNoCanary(output);
  });

  it('a store URL with a password, refused at start', async () => {
    const result = await runCliProcess(['serve', '--port', '0', '--store', `redis://user:${STORE_PASSWORD}@127.0.0.1:1/0?nope=${LIST_QUERY}`]);
    assert.equal(result.code, 1);
    assert.match(result.stderr, /could not start/);
    assertNoCanary(result.stdout + result.stderr);
  });
});
