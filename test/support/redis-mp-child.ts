/**
 * One delayq process of the multi-process test: consumes topic "mp" from a shared Redis
 * namespace and prints one line per delivery, "D <id> <runAt> <deliveredAt> <attempt>",
 * before acking (so a delivery cut short by SIGKILL is still seen, and its redelivery
 * counts as a duplicate). Prints "READY" once its queue is open.
 */
import { DelayQueue } from '../../src/engine/delay-queue.js';

const [url, prefix] = process.argv.slice(2);
if (url === undefined || prefix === undefined) throw new Error('usage: redis-mp-child <url> <prefix>');
const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
queue.work(
  'mp',
  async (delivery) => {
    process.stdout.write(`D ${delivery.id} ${delivery.runAt} ${Date.now()} ${delivery.attempt}\n`);
    await new Promise((resolve) => setTimeout(resolve, 2));
  },
  { concurrency: 20 },
);
process.stdout.write('READY\n');
process.on('SIGTERM', () => {
  void queue.close().then(() => process.exit(0));
});
