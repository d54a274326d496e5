/**
 * A consumer process of the flow benchmark (flow.bench.ts, case A): opens delayq on the
 * shared Redis namespace, works `topic` with concurrency 50 and prints "G <ms>" per
 * delivery, when its handler started (epoch ms). Warms its delivery path on a topic of its
 * own first, then prints READY; closes on SIGTERM.
 */
import { DelayQueue } from '../src/open-queue.js';
import { preciseNow } from './report.js';

const [url, prefix, topic] = process.argv.slice(2);
if (url === undefined || prefix === undefined || topic === undefined) throw new Error('usage: flow-child <url> <prefix> <topic>');
const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
let out: string[] = [];
const flush = (): void => {
  if (out.length > 0) process.stdout.write(out.join(''));
  out = [];
};
const timer = setInterval(flush, 50);

async function warmUp(): Promise<void> {
  const count = 2_000;
  const warmTopic = `warmup-${process.pid}`;
  let fired = 0;
  let done!: () => void;
  const all = new Promise<void>((resolve) => (done = resolve));
  const worker = queue.work(warmTopic, () => void (++fired === count && done()), { concurrency: 50 });
  const start = Date.now() + 200;
  await queue.scheduleMany(Array.from({ length: count }, (_, j) => ({ topic: warmTopic, payload: { warm: true }, runAt: start + Math.floor((j / count) * 500) })));
  await all;
  await worker.close();
}

await warmUp();
let working: { close(): Promise<void> } | null = null;
process.stdout.write('READY\n');
// Starts consuming on SIGUSR2, so all three processes start together.
process.on('SIGUSR2', () => {
  working ??= queue.work(topic, () => void out.push(`G ${preciseNow().toFixed(1)}\n`), { concurrency: 50 });
});
process.on('SIGTERM', () => {
  void (async () => {
    await working?.close();
    await queue.close();
    clearInterval(timer);
    flush();
    process.exit(0);
  })();
});
