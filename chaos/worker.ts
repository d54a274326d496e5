/**
 * A chaos worker: one delayq process that produces and consumes under load, and logs every
 * fact the checker needs to its facts file, one line each, with a write(2) that has
 * returned before the worker goes on, so a line written survives the SIGKILL that follows
 * it (src/testing/facts-file.ts says why not stdout):
 *
 *   S <id> <runAt>            the schedule of <id> was acknowledged (scheduleMany resolved)
 *   D <id> <attempt> <at> <got>  <id> was reserved for this consumer at <at> (the store's time of
 *                             the reservation: reservedUntil - ttrMs), whenever the answer
 *                             reached the consumer (a process frozen meanwhile gets it late),
 *                             which was at <got> (this process's clock)
 *   A <id> <attempt> <at>     the ack of that delivery was acknowledged (acked) at <at>
 *   E <op> <code> <at> <ms>   a call of <op> (schedule, reserve, ack) rejected at <at>, <ms> after
 *                             it was made, with the DelayQError <code> (`!<name>` for an error
 *                             that is not one): what a fault scenario asserts its callers saw
 *
 * and `R` to stdout once the queue is open (ready).
 *
 * Configured by the CHAOS_WORKER environment variable (JSON, WorkerConfig). SIGUSR2 stops
 * producing (the drain phase); SIGTERM closes the queue and exits.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isDelayQError } from '../src/core/errors.js';
import { PartialBatchError } from '../src/core/partial-batch.js';
import { DelayQueue } from '../src/open-queue.js';
import type { TopicLimitsInput } from '../src/engine/topics.js';
import type { StoreOptions } from '../src/stores/open-store.js';
import { appendFacts, openFacts } from '../src/testing/facts-file.js';
import { pino, destination } from 'pino';

export interface WorkerConfig {
  readonly store: string;
  readonly storeOptions?: Omit<StoreOptions, 'logger' | 'clock'>;
  /** Ids are `<idPrefix>-<n>`: unique per worker start. */
  readonly idPrefix: string;
  /** Tasks scheduled per second (0: consume only). */
  readonly rate: number;
  /** runAt = now + a random delay in [0, maxDelayMs]. */
  readonly maxDelayMs: number;
  readonly payloadBytes: number;
  readonly ttrMs: number;
  /** Concurrent reserve loops. */
  readonly consumers: number;
  /** How long a consumer holds a delivery before its ack (default: a random 0-10 ms), so a SIGKILL finds reservations open. */
  readonly holdMs?: number;
  /** The topic produced to and consumed from (default `chaos`). */
  readonly topic?: string;
  /** Flow limits set on the topic once the queue is open (q.topics.setLimits), before `R`. */
  readonly limits?: TopicLimitsInput;
  /** Where the facts go (appended; the runner reads it as it grows). */
  readonly factsFile: string;
  /** Where the queue's log goes (JSON lines, debug and up), if anywhere: a broken round keeps it. */
  readonly logFile?: string;
}

const config = JSON.parse(process.env['CHAOS_WORKER'] ?? '{}') as WorkerConfig;
const facts = openFacts(config.factsFile);
const out = (text: string): void => {
  if (text !== '') appendFacts(facts, text);
};

/** A rejected call, for the facts: its code, when, and how long it took to reject. */
function failed(op: string, error: unknown, since: number): void {
  const code = isDelayQError(error) ? error.code : `!${error instanceof Error ? error.name : typeof error}`;
  const at = Date.now();
  out(`E ${op} ${code} ${at} ${at - since}\n`);
}

// Synchronous, like the facts: what was logged before a SIGKILL is in the file.
const logger = config.logFile === undefined ? undefined : pino({ level: 'debug' }, destination({ dest: config.logFile, sync: true }));

const topic = config.topic ?? 'chaos';
let producing = config.rate > 0;
let running = true;
process.on('SIGUSR2', () => (producing = false));

async function openQueue(): Promise<DelayQueue> {
  // After a SIGKILL the store may still be coming back (a Redis restarting, a cluster failing over).
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await DelayQueue.open({ store: config.store, ...(config.storeOptions ? { storeOptions: config.storeOptions } : {}), ...(logger ? { logger } : {}) });
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await sleep(200);
    }
  }
}

async function produce(queue: DelayQueue): Promise<void> {
  const payload = { p: 'x'.repeat(Math.max(0, config.payloadBytes - 8)) };
  const tickMs = 50;
  const perTick = Math.max(1, Math.round((config.rate * tickMs) / 1000));
  let n = 0;
  while (producing && running) {
    const started = Date.now();
    const batch = Array.from({ length: perTick }, () => ({
      id: `${config.idPrefix}-${n++}`,
      topic,
      payload,
      runAt: Date.now() + Math.floor(Math.random() * (config.maxDelayMs + 1)),
      ttrMs: config.ttrMs,
      maxAttempts: 1_000,
      backoff: { baseMs: 50, factor: 1, maxMs: 50, jitter: 0 },
    }));
    // Sent again until acknowledged (schedule is idempotent by id); only then is it the checker's.
    // A store cut into partitions may store the tasks of some and not others (a shard that
    // cannot take writes): those are acknowledged, and the rest is given up, unacknowledged,
    // so that producing goes on while the shard is degraded (the checker allows a delivery
    // of an unacknowledged task, and expects none of them).
    for (;;) {
      const sent = Date.now();
      try {
        await queue.scheduleMany(batch);
        out(batch.map((t) => `S ${t.id} ${t.runAt}\n`).join(''));
        break;
      } catch (error) {
        if (error instanceof PartialBatchError) {
          out(batch.flatMap((t, i) => (error.outcomes[i] === undefined ? [] : [`S ${t.id} ${t.runAt}\n`])).join(''));
          break;
        }
        if (!running || !producing || (isDelayQError(error) && error.code === 'QUEUE_CLOSED')) return;
        failed('schedule', error, sent);
        await sleep(100);
      }
    }
    await sleep(Math.max(0, tickMs - (Date.now() - started)));
  }
}

async function consume(queue: DelayQueue): Promise<void> {
  while (running) {
    let batch;
    const asked = Date.now();
    try {
      batch = await queue.reserve(topic, { max: 20, waitMs: 300 });
    } catch (error) {
      if (running) failed('reserve', error, asked);
      await sleep(100);
      continue;
    }
    if (batch.length === 0) continue;
    const got = Date.now();
    out(batch.map((d) => `D ${d.id} ${d.attempt} ${d.reservedUntil - config.ttrMs} ${got}\n`).join(''));
    await sleep(config.holdMs ?? Math.random() * 10);
    // An ack whose answer is lost is sent again: acks are idempotent, so the resend says acked.
    for (let tries = 0; tries < 20 && running; tries++) {
      const sent = Date.now();
      try {
        const outcomes = await queue.ackMany(batch);
        const done = Date.now();
        out(batch.flatMap((d, i) => (outcomes[i] === 'acked' ? [`A ${d.id} ${d.attempt} ${done}\n`] : [])).join(''));
        break;
      } catch (error) {
        if (running) failed('ack', error, sent);
        await sleep(100);
      }
    }
  }
}

const queue = await openQueue();
if (config.limits !== undefined) await queue.topics.setLimits(topic, config.limits);
process.stdout.write('R\n');
let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  running = false;
  producing = false;
  void (async () => {
    await sleep(400);
    await queue.close().catch(() => undefined);
    process.exit(0);
  })();
});
const loops = [produce(queue), ...Array.from({ length: config.consumers }, () => consume(queue))];
await Promise.all(loops);
