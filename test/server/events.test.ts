// GET /v1/events over a real HTTP server: Server-Sent Events, guarded by the token, resumed
// with Last-Event-ID, bad filters refused with 4xx, and the stream ends with the server.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { openTestApp, type TestApp } from '../helpers/service.js';

const TOKEN = 'events-token';

interface SseMessage {
  readonly id: string;
  readonly event: string;
  readonly data: Record<string, unknown>;
}

/** Reads SSE messages from a streamed response until `n` came, or fails after 10 s. */
async function readMessages(res: Response, n: number): Promise<SseMessage[]> {
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  const messages: SseMessage[] = [];
  let text = '';
  const deadline = setTimeout(() => void reader.cancel(), 10_000);
  try {
    while (messages.length < n) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended after ${messages.length} of ${n} messages`);
      text += value;
      let cut: number;
      while ((cut = text.indexOf('\n\n')) >= 0) {
        const block = text.slice(0, cut);
        text = text.slice(cut + 2);
        const fields = new Map<string, string>();
        for (const line of block.split('\n')) {
          if (line.startsWith(':') || line === '') continue;
          const colon = line.indexOf(':');
          fields.set(line.slice(0, colon), line.slice(colon + 1).trimStart());
        }
        if (fields.has('data')) messages.push({ id: fields.get('id')!, event: fields.get('event')!, data: JSON.parse(fields.get('data')!) as Record<string, unknown> });
      }
    }
  } finally {
    clearTimeout(deadline);
    await reader.cancel().catch(() => undefined);
  }
  return messages;
}

describe('GET /v1/events', () => {
  let t: TestApp;
  let url: string;
  const auth = { authorization: `Bearer ${TOKEN}` };
  before(async () => {
    t = await openTestApp({ token: TOKEN, events: true });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('streams the events as SSE: id, event type, data', async () => {
    const res = await fetch(`${url}/v1/events?topic=sse&types=scheduled,cancelled`, { headers: auth });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    await new Promise((r) => setTimeout(r, 50));
    await t.queue.schedule({ topic: 'other', id: 'o1', delayMs: 60_000 });
    await t.queue.schedule({ topic: 'sse', id: 's1', delayMs: 60_000 });
    await t.queue.cancel('s1');
    const messages = await readMessages(res, 2);
    assert.deepEqual(messages.map((m) => [m.event, m.data['id'], m.data['topic']]), [['scheduled', 's1', 'sse'], ['cancelled', 's1', 'sse']]);
    assert.equal(messages[0]!.data['type'], 'scheduled');
    assert.equal(messages[0]!.data['eventId'], undefined);
    const [epoch0, n0] = messages[0]!.id.split('-');
    const [epoch1, n1] = messages[1]!.id.split('-');
    assert.equal(epoch1, epoch0);
    assert.ok(Number(n1) > Number(n0));

    // Resumed after the first: the second again, without waiting for anything new.
    const resumed = await fetch(`${url}/v1/events?topic=sse`, { headers: { ...auth, 'last-event-id': messages[0]!.id } });
    const [again] = await readMessages(resumed, 1);
    assert.deepEqual([again?.id, again?.event], [messages[1]!.id, 'cancelled']);
  });

  it('needs the token, and refuses bad filters and ids with 4xx {error}', async () => {
    assert.equal((await fetch(`${url}/v1/events`)).status, 401);
    for (const [query, headers] of [
      ['types=nope', {}],
      ['topic=a%20b', {}],
      [`types=${'acked,'.repeat(40)}acked`, {}],
      ['after=1-2-3', {}],
      ['', { 'last-event-id': 'x'.repeat(100) }],
    ] as const) {
      const res = await fetch(`${url}/v1/events?${query}`, { headers: { ...auth, ...headers } });
      const body = (await res.json()) as { error: { code: string; message: string } };
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
      assert.equal(typeof body.error.code, 'string');
      assert.equal(typeof body.error.message, 'string');
    }
  });

  it('answers 400 INVALID_OPTION when events are off', async () => {
    const off = await openTestApp({});
    try {
      const res = await off.app.inject({ method: 'GET', url: '/v1/events' });
      assert.equal(res.statusCode, 400);
      assert.equal(res.json<{ error: { code: string } }>().error.code, 'INVALID_OPTION');
    } finally {
      await off.close();
    }
  });
});
