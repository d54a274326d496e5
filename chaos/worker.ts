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
 *   C <op> <at> <ms>          a call of <op> that succeeded at <at> but took <ms> (only with
 *                             slowCallMs, for calls at least that slow; a reserve's own wait
 *                             for tasks, waitMs, is not counted)
 *
 * With `work` (long handlers, issue 46) the consumers are `q.work` handlers that take
 * `minFactor`-`maxFactor` times the ttr, in steps of `stepMs`, looking at their signal
 * before each; a D line is written when a handler starts (`got`: then), and
 *   W <id> <attempt> <at>     a step of work began at <at> (the signal was not aborted)
 *   X <id> <attempt> <at> <code>  the handler's signal aborted with <code>, as of <at> (a lost
 *                             reservation's `lostAt`: its lapse, which a process frozen past it
 *                             learns when it wakes; else when the abort came)
 *   K <id> <attempt> <at>     the handler's work was done, and its own ack (ctx.ack) sent, at <at>
 *   A <id> <attempt> <at>     that ack was acknowledged at <at>
 *   L <id> <attempt> <at>     that ack was refused: the reservation was no longer its
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
import type { TopicLimitsInput } from '../src/engine/topics/topics.js';
import type { StoreOptions } from '../src/stores/open-store.js';
import { pino, destination } from 'pino';
import { workerKit } from './worker-kit.js';

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
  /** runAt = now + a random delay in [minDelayMs, maxDelayMs] (default 0). */
  readonly minDelayMs?: number;
  /** Most tasks a reserve takes (default 20). */
  readonly reserveMax?: number;
  /** Calls that succeed but take at least this long are logged (`C` lines). */
  readonly slowCallMs?: number;
  /**
   * A file holding the rate to produce at (tasks/s), read every 250 ms while it exists: the
   * runner changes a running worker's rate through it (the overload cell). `rate` until then.
   */
  readonly rateFile?: string;
  /** Long handlers instead of reserve loops (`consumers` ignored): see the header. */
  readonly work?: { readonly minFactor: number; readonly maxFactor: number; readonly stepMs: number; readonly concurrency: number };
}

const kit = workerKit();
const { config, state } = kit;
const out = (text: string): void => kit.out(text);

/** A rejected call, for the facts: its code, when, and how long it took to reject. */
function failed(op: string, error: unknown, since: number): void {
  kit.failed(op, isDelayQError(error) ? error.code : `!${error instanceof Error ? error.name : typeof error}`, since);
}

// Synchronous, like the facts: what was logged before a SIGKILL is in the file.
const logger = config.logFile === undefined ? undefined : pino({ level: 'debug' }, destination({ dest: config.logFile, sync: true }));

const topic = config.topic ?? 'chaos';

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
  let n = 0;
  while (state.producing && state.running) {
    const started = Date.now();
    const perTick = kit.owed();
    if (perTick === 0) {
      await sleep(tickMs);
      continue;
    }
    const batch = Array.from({ length: perTick }, () => ({
      id: `${config.idPrefix}-${n++}`,
      topic,
      payload,
      runAt: kit.runAt(),
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
        kit.slow('schedule', sent);
        out(batch.map((t) => `S ${t.id} ${t.runAt}\n`).join(''));
        break;
      } catch (error) {
        if (error instanceof PartialBatchError) {
          out(batch.flatMap((t, i) => (error.outcomes[i] === undefined ? [] : [`S ${t.id} ${t.runAt}\n`])).join(''));
          break;
        }
        if (!state.running || !state.producing || (isDelayQError(error) && error.code === 'QUEUE_CLOSED')) return;
        failed('schedule', error, sent);
        await sleep(100);
      }
    }
    await sleep(Math.max(0, tickMs - (Date.now() - started)));
  }
}

async function consume(queue: DelayQueue): Promise<void> {
  while (state.running) {
    let batch;
    const asked = Date.now();
    try {
      batch = await queue.reserve(topic, { max: config.reserveMax ?? 20, waitMs: 300 });
      // A reserve that found nothing waited up to waitMs for tasks by design: that is no slowness.
      kit.slow('reserve', asked, batch.length === 0 ? 300 : 0);
    } catch (error) {
      if (state.running) failed('reserve', error, asked);
      await sleep(100);
      continue;
    }
    if (batch.length === 0) continue;
    const got = Date.now();
    out(batch.map((d) => `D ${d.id} ${d.attempt} ${d.reservedUntil - config.ttrMs} ${got}\n`).join(''));
    await sleep(config.holdMs ?? Math.random() * 10);
    // An ack whose answer is lost is sent again: acks are idempotent, so the resend says acked.
    for (let tries = 0; tries < 20 && state.running; tries++) {
      const sent = Date.now();
      try {
        const outcomes = await queue.ackMany(batch);
        kit.slow('ack', sent);
        const done = Date.now();
        out(batch.flatMap((d, i) => (outcomes[i] === 'acked' ? [`A ${d.id} ${d.attempt} ${done}\n`] : [])).join(''));
        break;
      } catch (error) {
        if (state.running) failed('ack', error, sent);
        await sleep(100);
      }
    }
  }
}

/** The long handlers of `config.work`: each looks at its signal before every step, and acks itself. */
function workLong(queue: DelayQueue, work: NonNullable<WorkerConfig['work']>): Promise<void> {
  const worker = queue.work(
    topic,
    async (d, ctx) => {
      const started = Date.now();
      out(`D ${d.id} ${d.attempt} ${d.reservedUntil - config.ttrMs} ${started}\n`);
      ctx.signal.addEventListener(
        'abort',
        () => {
          const reason: unknown = ctx.signal.reason;
          const lostAt = isDelayQError(reason) && typeof reason.details?.['lostAt'] === 'number' ? reason.details['lostAt'] : Date.now();
          out(`X ${d.id} ${d.attempt} ${lostAt} ${isDelayQError(reason) ? reason.code : '!'}\n`);
        },
        { once: true },
      );
      const duration = config.ttrMs * (work.minFactor + Math.random() * (work.maxFactor - work.minFactor));
      while (Date.now() - started < duration) {
        ctx.signal.throwIfAborted();
        out(`W ${d.id} ${d.attempt} ${Date.now()}\n`);
        await sleep(work.stepMs);
      }
      ctx.signal.throwIfAborted();
      out(`K ${d.id} ${d.attempt} ${Date.now()}\n`);
      try {
        await ctx.ack();
        out(`A ${d.id} ${d.attempt} ${Date.now()}\n`);
      } catch (error) {
        if (isDelayQError(error, 'STALE_RECEIPT')) out(`L ${d.id} ${d.attempt} ${Date.now()}\n`);
        else failed('ack', error, Date.now());
        throw error;
      }
    },
    { concurrency: work.concurrency },
  );
  return new Promise<void>((resolve) => process.once('SIGTERM', () => void worker.close({ timeoutMs: 300 }).then(resolve)));
}

const queue = await openQueue();
if (config.limits !== undefined) await queue.topics.setLimits(topic, config.limits);
process.stdout.write('R\n');
kit.closeOnSigterm(() => queue.close());
const loops = [produce(queue), ...(config.work !== undefined ? [workLong(queue, config.work)] : Array.from({ length: config.consumers }, () => consume(queue)))];
await Promise.all(loops);
