/**
 * A process of the cron benchmark's multi-process mode (`npm run bench -- cron --processes 3`):
 * opens delayq on the shared namespace and consumes topic `cron` with concurrency 100,
 * printing "L <id> <lateness ms>" per delivery. Prints READY when open. Commands on stdin,
 * one a line:
 *   UPSERT <n> <startMs> <schedules|tasks> <seconds>: creates the n schedules every second,
 *     schedule i first at startMs + i/n of a second (or, for `tasks`, the same occurrences
 *     of `seconds` seconds as plain tasks); then prints UPSERTED
 *   MARK: starts the CPU window (process.cpuUsage)
 *   STOP: prints "CPU <user+system ms since MARK>" and "SWAPS <tried> <won>" (the schedule
 *     swaps this process's schedule loop sent since MARK: its planning work, schedule by
 *     schedule), closes the queue, flushes and exits
 */
import { createInterface } from 'node:readline';
import type { RecurringScheduleSwap, TaskStore } from '../src/core/ports/index.js';
import { DelayQueue } from '../src/open-queue.js';
import { openStore } from '../src/stores/open-store.js';
import { preciseNow } from './report.js';
import { withMembers } from '../src/testing/with-members.js';

const PAYLOAD = { p: 'x'.repeat(64 - '{"p":""}'.length) };
const [url, prefix] = process.argv.slice(2);
if (url === undefined || prefix === undefined) throw new Error('usage: cron-child <url> <prefix>');
let tried = 0;
let won = 0;
/** The store, with the schedule swaps counted. */
function countingSwaps(store: TaskStore): TaskStore {
  const schedules = withMembers(store.schedules, {
    swapSchedules: async (swaps: readonly RecurringScheduleSwap[]) => {
      tried += swaps.length;
      const results = await store.schedules.swapSchedules(swaps);
      for (const ok of results) if (ok) won++;
      return results;
    },
  });
  return withMembers(store, { schedules });
}

const queue = await DelayQueue.open({ store: countingSwaps(await openStore(url, { prefix })) });
let out: string[] = [];
const flush = (): void => {
  if (out.length > 0) process.stdout.write(out.join(''));
  out = [];
};
const timer = setInterval(flush, 50);
queue.work('cron', (d) => void out.push(`L ${d.id} ${(preciseNow() - d.runAt).toFixed(2)}\n`), { concurrency: 100 });

let mark = process.cpuUsage();
const phase = (i: number, n: number): number => Math.floor((i * 1_000) / n);

async function upsert(n: number, start: number, kind: string, seconds: number): Promise<void> {
  if (kind === 'schedules') {
    const defs = Array.from({ length: n }, (_, i) => ({ id: `s${i}`, topic: 'cron', everyMs: 1_000, payload: PAYLOAD, startAt: start + phase(i, n) }));
    for (let b = 0; b < n; b += 1_000) await queue.schedules.upsertMany(defs.slice(b, b + 1_000));
    return;
  }
  for (let k = 0; k < seconds; k++)
    for (let b = 0; b < n; b += 1_000)
      await queue.scheduleMany(
        Array.from({ length: Math.min(1_000, n - b) }, (_, j) => {
          const runAt = start + phase(b + j, n) + k * 1_000;
          return { id: `s${b + j}:${runAt}`, topic: 'cron', payload: PAYLOAD, runAt };
        }),
      );
}

createInterface({ input: process.stdin }).on('line', (line) => {
  const [command, ...args] = line.split(' ');
  if (command === 'UPSERT') {
    void upsert(Number(args[0]), Number(args[1]), args[2] ?? 'schedules', Number(args[3] ?? 0)).then(() => process.stdout.write('UPSERTED\n'));
  } else if (command === 'MARK') {
    mark = process.cpuUsage();
    tried = won = 0;
  } else if (command === 'STOP') {
    const used = process.cpuUsage(mark);
    const swaps = `SWAPS ${tried} ${won}\n`;
    void queue.close().then(() => {
      clearInterval(timer);
      flush();
      process.stdout.write(`${swaps}CPU ${((used.user + used.system) / 1_000).toFixed(1)}\n`);
      process.exit(0);
    });
  }
});
process.stdout.write('READY\n');
