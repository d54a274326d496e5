// DELETE /v1/topics/:topic/tasks?state=...: over a listening server, through the client and
// as raw requests, every input checked and answered with { error: { code, message } }.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { useListeningApp } from '../helpers/service.js';

describe('DELETE /v1/topics/:topic/tasks', () => {
  const server = useListeningApp();

  it('purges the topic\'s tasks in the state asked, answers { purged }, and touches no other topic', async () => {
    await server.client.scheduleMany([
      { id: 'a1', topic: 'spam', delayMs: 60_000 },
      { id: 'a2', topic: 'spam', delayMs: 60_000 },
      { id: 'b1', topic: 'ham', delayMs: 60_000 },
    ]);
    assert.equal(await server.client.cancel('a2'), true);
    const raw = await fetch(`${server.url}/v1/topics/spam/tasks?state=pending`, { method: 'DELETE' });
    assert.equal(raw.status, 200);
    assert.deepEqual(await raw.json(), { purged: 1 });
    assert.equal(await server.client.get('a1'), null);
    assert.equal((await server.client.get('b1'))?.state, 'pending');
    assert.equal(await server.client.topics.purge('spam', { state: 'completed' }), 1, 'the cancelled one');
    assert.equal(await server.client.topics.purge('spam', { state: 'dead' }), 0);
    const stats = await server.client.stats();
    assert.equal(stats.topics['spam'], undefined);
    assert.deepEqual(stats.topics['ham'], { pending: 1 });
  });

  it('refuses bad input with a 4xx and { error: { code, message } }, purging nothing', async () => {
    const cases: [string, number, string][] = [
      ['/v1/topics/ham/tasks', 400, 'INVALID_ARGUMENT'],
      ['/v1/topics/ham/tasks?state=reserved', 400, 'INVALID_ARGUMENT'],
      ['/v1/topics/ham/tasks?state=cancelled', 400, 'INVALID_ARGUMENT'],
      [`/v1/topics/ham/tasks?state=${'p'.repeat(5_000)}`, 400, 'INVALID_ARGUMENT'],
      ['/v1/topics/ham/tasks?state=pending&state=dead', 400, 'INVALID_ARGUMENT'],
      ['/v1/topics/ham/tasks?state=pending&max=3', 400, 'INVALID_ARGUMENT'],
      ['/v1/topics/h%20m/tasks?state=pending', 400, 'INVALID_TOPIC'],
      [`/v1/topics/${'x'.repeat(201)}/tasks?state=pending`, 400, 'INVALID_TOPIC'],
    ];
    for (const [path, status, code] of cases) {
      const answer = await fetch(`${server.url}${path}`, { method: 'DELETE' });
      assert.equal(answer.status, status, path.slice(0, 80));
      const body = (await answer.json()) as { error: { code: string; message: string } };
      assert.equal(body.error.code, code, path.slice(0, 80));
      assert.equal(typeof body.error.message, 'string');
    }
    assert.equal((await server.client.get('b1'))?.state, 'pending', 'nothing purged');
    await assert.rejects(server.client.topics.purge('ham', { state: 'reserved' as 'dead' }), (e: Error & { code?: string }) => e.code === 'INVALID_ARGUMENT');
  });
});
