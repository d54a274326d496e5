/**
 * A consumer process of the Redis benchmark (3-process runs): opens delayq on the shared
 * namespace, consumes `topic` with concurrency 50 and prints "L <id> <lateness ms>" per
 * delivery. Prints READY when open; closes on SIGTERM.
 */
import { DelayQueue } from '../src/engine/delay-queue.js';
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
queue.work(
  topic,
  (delivery) => {
    out.push(`L ${delivery.id} ${(preciseNow() - delivery.runAt).toFixed(2)}\n`);
  },
  { concurrency: 50 },
);
process.stdout.write('READY\n');
process.on('SIGTERM', () => {
  void queue.close().then(() => {
    clearInterval(timer);
    flush();
    process.exit(0);
  });
});
