/**
 * What the benchmarks' consumer processes share (redis-child.ts, flow-child.ts): their
 * arguments, a delayq queue on the shared Redis namespace, output lines gathered and written
 * every 50 ms (one write per burst, not per delivery), and a warm-up of the delivery path on
 * a topic of the process's own, so the first measured tasks do not pay for JIT and
 * connections.
 */
import { DelayQueue } from '../src/open-queue.js';

export interface BenchChild {
  readonly queue: DelayQueue;
  /** The topic the process consumes. */
  readonly topic: string;
  /** Adds an output line (with its newline), written within 50 ms. */
  write(line: string): void;
  /** Fires `count` tasks of a topic of its own through this process, due over `spreadMs`, starting `leadMs` from now. */
  warmUp(count: number, options?: { readonly leadMs?: number; readonly spreadMs?: number }): Promise<void>;
  /** Writes what is gathered and stops gathering: before the process exits. */
  end(): void;
}

export async function openBenchChild(name: string): Promise<BenchChild> {
  const [url, prefix, topic] = process.argv.slice(2);
  if (url === undefined || prefix === undefined || topic === undefined) throw new Error(`usage: ${name} <url> <prefix> <topic>`);
  const queue = await DelayQueue.open({ store: url, storeOptions: { prefix } });
  let out: string[] = [];
  const flush = (): void => {
    if (out.length > 0) process.stdout.write(out.join(''));
    out = [];
  };
  const timer = setInterval(flush, 50);
  return {
    queue,
    topic,
    write: (line) => void out.push(line),
    async warmUp(count, { leadMs = 300, spreadMs = 500 } = {}) {
      const warmTopic = `warmup-${process.pid}`;
      let fired = 0;
      let done!: () => void;
      const all = new Promise<void>((resolve) => (done = resolve));
      const worker = queue.work(warmTopic, () => void (++fired === count && done()), { concurrency: 50 });
      const start = Date.now() + leadMs;
      for (let from = 0; from < count; from += 1_000) {
        const size = Math.min(1_000, count - from);
        await queue.scheduleMany(Array.from({ length: size }, (_, j) => ({ topic: warmTopic, payload: { warm: true }, runAt: start + Math.floor(((from + j) / count) * spreadMs) })));
      }
      await all;
      await worker.close();
    },
    end() {
      clearInterval(timer);
      flush();
    },
  };
}
