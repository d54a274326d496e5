/**
 * A consumer process of the Redis benchmark (3-process runs): opens delayq on the shared
 * namespace, consumes `topic` with concurrency 50 and prints "L <id> <lateness ms>" per
 * delivery. Prints READY when open and warm; closes on SIGTERM.
 */
import { DelayQueue } from '../src/open-queue.js';
import { preciseNow } from './report.js';

const [url, prefix, topic] = process.argv.slice(2);
if (url === undefined || prefix === undefined || topic === undefined) throw new Error('usage: redis-child <url> <prefix> <topic>');
const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
let out: string[] = [];
const flush = (): void => {
  if (out.length > 0) process.stdout.write(out.join(''));
  out = [];
};
const timer = setInterval(flush, 50);

/** Fires 5,000 tasks of a topic of its own through this process first (see warmDeliveries in redis.bench.ts). */
async function warmUp(): Promise<void> {
  const count = 5_000;
  const warmTopic = `warmup-${process.pid}`;
  let fired = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const worker = queue.work(warmTopic, () => {
    if (++fired === count) done();
  }, { concurrency: 50 });
  const start = Date.now() + 300;
  for (let from = 0; from < count; from += 1_000)
    await queue.scheduleMany(Array.from({ length: 1_000 }, (_, j) => ({ topic: warmTopic, payload: { warm: true }, runAt: start + Math.floor(((from + j) / count) * 500) })));
  await all;
  await worker.close();
}
queue.work(
  topic,
  (delivery) => {
    out.push(`L ${delivery.id} ${(preciseNow() - delivery.runAt).toFixed(2)}\n`);
  },
  { concurrency: 50 },
);
await warmUp();
process.stdout.write('READY\n');
process.on('SIGTERM', () => {
  void queue.close().then(() => {
    clearInterval(timer);
    flush();
    process.exit(0);
  });
});
