/**
 * A consumer process of the Redis benchmark (3-process runs): opens delayq on the shared
 * namespace, consumes `topic` with concurrency 50 and prints "L <id> <lateness ms>" per
 * delivery. Prints READY when open and warm (5,000 tasks of its own, see warmDeliveries in
 * redis.bench.ts); closes on SIGTERM.
 */
import { openBenchChild } from './child-process.js';
import { preciseNow } from './report.js';

const child = await openBenchChild('redis-child');
const { queue, topic } = child;
queue.work(topic, (delivery) => child.write(`L ${delivery.id} ${(preciseNow() - delivery.runAt).toFixed(2)}\n`), { concurrency: 50 });
await child.warmUp(5_000);
process.stdout.write('READY\n');
process.on('SIGTERM', () => {
  void queue.close().then(() => {
    child.end();
    process.exit(0);
  });
});
