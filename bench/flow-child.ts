/**
 * A consumer process of the flow benchmark (flow.bench.ts, case A): opens delayq on the
 * shared Redis namespace, works `topic` with concurrency 50 and prints "G <ms>" per
 * delivery, when its handler started (epoch ms). Warms its delivery path on a topic of its
 * own first, then prints READY; starts consuming on SIGUSR2, so all three processes start
 * together; closes on SIGTERM.
 */
import { openBenchChild } from './child-process.js';
import { preciseNow } from './report.js';

const child = await openBenchChild('flow-child');
const { queue, topic } = child;
await child.warmUp(2_000, { leadMs: 200 });
let working: { close(): Promise<void> } | null = null;
process.stdout.write('READY\n');
process.on('SIGUSR2', () => {
  working ??= queue.work(topic, () => child.write(`G ${preciseNow().toFixed(1)}\n`), { concurrency: 50 });
});
process.on('SIGTERM', () => {
  void (async () => {
    await working?.close();
    await queue.close();
    child.end();
    process.exit(0);
  })();
});
