// POST /v1/topics/:topic/pause and /resume: over a listening server, through the client and
// as raw requests; a paused topic's due task is held, then delivered on resume; bad input is
// a 4xx { error: { code, message } }.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useListeningApp } from '../helpers/service.js';

// A POST carries JSON (the server refuses other bodies: 415), here an empty object.
const JSON_POST = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };

describe('POST /v1/topics/:topic/pause and /resume', () => {
  const server = useListeningApp();

  it('pauses: a due task is not reserved and stats list the topic; resume delivers it', async () => {
    const raw = await fetch(`${server.url}/v1/topics/held/pause`, JSON_POST);
    assert.equal(raw.status, 200);
    assert.deepEqual(await raw.json(), { topic: 'held', paused: true, changed: true });
    assert.deepEqual(await server.client.topics.pause('held'), { topic: 'held', paused: true, changed: false });
    await server.client.schedule({ id: 'h1', topic: 'held' });
    assert.deepEqual(await server.client.reserve('held', { waitMs: 0 }), []);
    const stats = await server.client.stats();
    assert.deepEqual(stats.paused, ['held']);
    assert.deepEqual(stats.topics['held'], { pending: 1 });

    assert.deepEqual(await server.client.topics.resume('held'), { topic: 'held', paused: false, changed: true });
    assert.deepEqual((await server.client.reserve('held', { waitMs: 2_000 })).map((d) => d.id), ['h1']);
    assert.deepEqual((await server.client.stats()).paused, []);
  });

  it('refuses a bad topic with a 4xx and { error: { code, message } }', async () => {
    for (const [path, status, code] of [
      ['/v1/topics/h%20m/pause', 400, 'INVALID_TOPIC'],
      [`/v1/topics/${'x'.repeat(201)}/resume`, 400, 'INVALID_TOPIC'],
    ] as const) {
      const answer = await fetch(`${server.url}${path}`, JSON_POST);
      assert.equal(answer.status, status, path.slice(0, 80));
      const body = (await answer.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, code);
      assert.equal(typeof body.error.message, 'string');
    }
    assert.deepEqual((await server.client.stats()).paused, []);
  });
});
