/**
 * One S3 run for bench/priority.bench.ts, in a process of its own so that the same file can
 * run against another checkout (--base): 5,000 tasks/s of 64-byte payloads for `seconds`,
 * each due 2 s after it is scheduled, on a topic without priorities, one queue, a worker of
 * concurrency 50. Prints one JSON line: {p50, p99, losses}. Imports nothing but the queue and s3-paced.ts.
 *
 *   node --import tsx bench/priority-s3-child.ts <redis url> <prefix> <seconds>
 */
import { DelayQueue } from '../src/open-queue.js';
import { s3PacedLateness } from './s3-paced.js';

const [url = '', prefix = 'p', secondsText = '10'] = process.argv.slice(2);
const seconds = Number(secondsText);

const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
await s3PacedLateness(queue, 2); // warm the delivery path
const result = await s3PacedLateness(queue, seconds);
await queue.close();
console.log(JSON.stringify(result));
