/**
 * Part (e) of `npm run bench -- push`, in a fresh process (nothing loaded yet, as after a
 * start): a queue subscribes a topic to a node:http receiver in this process, then 21 tasks
 * fall due, the first 1 s after the subscription and the rest 50 ms apart. Prints the first
 * push's lateness and the later ones' (arrival - runAt, ms) as one JSON line.
 *   --cold: the transport without its warm-up (checkUrl by the guard alone, no warm), as
 *   before the warm-up existed: the comparison.
 */
import { createServer } from 'node:http';
import { DelayQueue } from '../src/index.js';
import { checkUrl, createAddressGuard } from '../src/push/address-guard.js';
import { createLazyPushTransport } from '../src/push/lazy-transport.js';
import type { PushTransport } from '../src/core/push.js';

const cold = process.argv.includes('--cold');
const now = (): number => performance.timeOrigin + performance.now();
const arrivals = new Map<string, number>();
const server = createServer((request, response) => {
  const at = now();
  const runAt = Number(request.headers['delayq-run-at']);
  request.resume();
  request.on('end', () => {
    arrivals.set(String(request.headers['webhook-id']), at - runAt);
    response.writeHead(204).end();
  });
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const port = (server.address() as { port: number }).port;

const allow = ['127.0.0.1/32'];
let transport: PushTransport | undefined;
if (cold) {
  const lazy = createLazyPushTransport({ allow });
  const guard = createAddressGuard(allow);
  transport = { checkUrl: (url) => checkUrl(url, guard), send: (request, signal) => lazy.send(request, signal), close: () => lazy.close() };
}
const q = await DelayQueue.open({ store: 'memory', push: { allow, ...(transport ? { transport } : {}) } });
await q.setPush('first', { url: `http://127.0.0.1:${port}/hook` });
const start = Date.now() + 1_000;
const ids = Array.from({ length: 21 }, (_, i) => `t${i}`);
await q.scheduleMany(ids.map((id, i) => ({ id, topic: 'first', payload: { i }, runAt: start + i * 50 })));
while (arrivals.size < ids.length) await new Promise((resolve) => setTimeout(resolve, 20));
await q.close();
server.close();
const lateness = ids.map((id) => arrivals.get(id) ?? NaN);
console.log(JSON.stringify({ first: lateness[0], later: lateness.slice(1) }));
