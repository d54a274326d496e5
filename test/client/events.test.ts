// client.events(): GET /v1/events from a real server, refusals rebuilt as errors, and a
// stream that drops opened again with Last-Event-ID (against a scripted SSE server).
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { DelayQClient, isDelayQClientError, type TaskEventView } from '../../src/client/index.js';
import { openTestApp, type TestApp } from '../helpers/service.js';

async function take(it: AsyncIterator<TaskEventView>, n: number): Promise<TaskEventView[]> {
  const out: TaskEventView[] = [];
  while (out.length < n) {
    const next = await it.next();
    if (next.done === true) break;
    out.push(next.value);
  }
  return out;
}

describe('client.events()', () => {
  let t: TestApp;
  let url: string;
  before(async () => {
    t = await openTestApp({ token: 'k', events: true });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('iterates the server\'s events, filtered, and resumes after an eventId', async () => {
    const client = new DelayQClient({ url, token: 'k' });
    const stop = new AbortController();
    const events = client.events({ topic: 'ce', types: ['scheduled', 'cancelled'], signal: stop.signal });
    // The stream is live once it yields: probes are scheduled until one comes back. (A fixed
    // 100 ms wait raced the connection: on a loaded host c1's 'scheduled' went out before the
    // stream was open, and the test waited for an event that had passed until its timeout.)
    const first = events.next();
    for (let probe = 0; ; probe++) {
      await t.queue.schedule({ topic: 'ce', id: `probe${probe}`, delayMs: 60_000 });
      const came = await Promise.race([first.then(() => true), new Promise<false>((r) => setTimeout(() => r(false), 50))]);
      if (came) break;
    }
    await t.queue.schedule({ topic: 'ce', id: 'c1', delayMs: 60_000 });
    await t.queue.schedule({ topic: 'other', id: 'x1', delayMs: 60_000 });
    await t.queue.cancel('c1');
    const got: TaskEventView[] = [];
    while (got.length < 2) {
      const next = await events.next();
      if (next.done === true) break;
      if (!next.value.id.startsWith('probe')) got.push(next.value);
    }
    assert.deepEqual(got.map((e) => [e.type, e.id, e.topic, e.attempt]), [['scheduled', 'c1', 'ce', 0], ['cancelled', 'c1', 'ce', null]]);
    stop.abort();
    assert.deepEqual(await events.next(), { value: undefined, done: true });

    const resumed = client.events({ topic: 'ce', after: got[0]!.eventId });
    assert.equal((await take(resumed, 1))[0]?.eventId, got[1]!.eventId);
    await resumed.return();
  });

  it('throws the server\'s refusal: no token, a bad type', async () => {
    await assert.rejects(new DelayQClient({ url }).events().next(), (e) => isDelayQClientError(e, 'UNAUTHORIZED'));
    const bad = new DelayQClient({ url, token: 'k' }).events({ types: ['nope' as 'acked'] });
    await assert.rejects(bad.next(), (e) => isDelayQClientError(e) && e.status === 400);
  });

  it('opens a dropped stream again with Last-Event-ID, and skips messages that are not events', async () => {
    const seen: IncomingHttpHeaders[] = [];
    const event = (id: string, n: number): string => `id: ${id}\nevent: acked\ndata: ${JSON.stringify({ type: 'acked', id: `t${n}`, topic: 'x', attempt: 1, at: n })}\n\n`;
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (seen.length === 1) {
        res.write('retry: 100\n\n');
        res.write(event('1-0', 1));
        res.write('id: 1-1\ndata: not json\n\n');
        res.write(`id: 1-2\ndata: ${JSON.stringify({ type: 'toString', id: 'a', topic: 'x', attempt: 1, at: 1 })}\n\n`);
        // Dropped mid-stream.
        setTimeout(() => res.destroy(), 20);
      } else {
        res.write(event('2-0', 2));
      }
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const client = new DelayQClient({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
      const events = client.events();
      const got = await take(events, 2);
      assert.deepEqual(got.map((e) => [e.eventId, e.id]), [['1-0', 't1'], ['2-0', 't2']]);
      assert.equal(seen[0]?.['last-event-id'], undefined);
      assert.equal(seen[1]?.['last-event-id'], '1-0');
      await events.return();
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
