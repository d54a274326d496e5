/**
 * demo: the seeds' three cases, played against a running server with time compressed
 * (one "unit" is a second at --speed 1), printed as the tasks fire:
 *
 *   orders       5 orders, each with a close task due in 3 units ("30 min unpaid");
 *                2 are paid after 1 unit, which cancels their close task.
 *   reviews      3 finished orders, each auto-rated 5 stars after 4 units ("48 h");
 *                1 is reviewed by its buyer after 2 units, which cancels the auto-rating.
 *   connections  4 connections marked offline 2 units ("30 s") after their last keepalive;
 *                2 keep sending keepalives (each PATCH pushes the deadline back), 1 stops
 *                after 2 units, 1 never sends one.
 *
 * Each case has its own consumer long-polling its topic (reserve, then ack). The demo
 * passes (exit 0) when exactly the expected tasks fire.
 *
 * It cleans up after itself, whether it passed, failed or was interrupted (Ctrl-C): it
 * purges every task of its demo-<run>.* topics in each state it leaves tasks in (pending:
 * those that have not fired, so none fires later; completed and cancelled; dead, should
 * one have failed), through DELETE /v1/topics/:topic/tasks, so its topics no longer appear
 * in the store's stats. It creates no schedules or push subscriptions.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError, type Command } from 'commander';
import type { DelayQClient, DeliveryView } from '../../client/index.js';
import { contextOf, RequestFailed } from '../context.js';
import type { Output } from '../output.js';

interface DemoPayload {
  kind: 'order' | 'review' | 'connection';
  name: string;
}

interface DemoEvent {
  t: number;
  case: string;
  event: string;
  id?: string;
  latenessMs?: number;
}

function speedArg(value: string): number {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0.1 || n > 100) throw new InvalidArgumentError('expected a number from 0.1 to 100');
  return n;
}

export function registerDemoCommand(program: Command): void {
  program
    .command('demo')
    .description("play the seeds' three cases (unpaid orders, auto-rating, keepalive timeouts) against a running server")
    .option('--speed <x>', 'time compression: 1 = one demo unit per second, 2 = twice as fast', speedArg, 1)
    .action(async (options: { speed: number }, command: Command) => {
      const { client, out } = contextOf(command);
      const interrupted = new AbortController();
      const onSignal = (): void => interrupted.abort();
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await runDemo(client, out, 1_000 / options.speed, interrupted.signal);
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}

export async function runDemo(client: DelayQClient, out: Output, unitMs: number, interrupted: AbortSignal = new AbortController().signal): Promise<void> {
  const run = Date.now().toString(36);
  const topics = { orders: `demo-${run}.orders.close`, reviews: `demo-${run}.reviews.autorate`, connections: `demo-${run}.conn.offline` };
  const started = Date.now();
  const emit = (event: Omit<DemoEvent, 't'>): void => {
    const full: DemoEvent = { t: Date.now() - started, ...event };
    out.result(full, () => `[${(full.t / 1000).toFixed(2).padStart(6)}s] ${full.case.padEnd(11)} ${full.event}`);
  };
  const expected = new Set<string>();
  const unexpected: string[] = [];
  const fired = new Set<string>();
  const id = (name: string): string => `demo-${run}-${name}`;

  const stop = new AbortController();
  const onInterrupt = (): void => stop.abort();
  interrupted.addEventListener('abort', onInterrupt, { once: true });
  const pause = (ms: number): Promise<void> => sleep(ms, undefined, { signal: stop.signal });
  const consume = async (topic: string, label: string, describe: (d: DeliveryView<DemoPayload>) => string): Promise<void> => {
    while (!stop.signal.aborted) {
      const deliveries = await client.reserve<DemoPayload>(topic, { max: 100, waitMs: Math.round(unitMs), signal: stop.signal });
      for (const d of deliveries) {
        await client.ack(d.id, d.receipt);
        fired.add(d.id);
        if (!expected.has(d.id)) unexpected.push(d.id);
        emit({ case: label, event: `${describe(d)} (fired ${Date.now() - d.runAt} ms after due)`, id: d.id, latenessMs: Date.now() - d.runAt });
      }
    }
  };
  const consumers = [
    consume(topics.orders, 'orders', (d) => `order ${d.payload.name} closed: still unpaid after "30 min"`),
    consume(topics.reviews, 'reviews', (d) => `order ${d.payload.name} auto-rated 5 stars: no review after "48 h"`),
    consume(topics.connections, 'connections', (d) => `connection ${d.payload.name} marked offline: no keepalive for "30 s"`),
  ];

  const schedule = async (topic: string, name: string, kind: DemoPayload['kind'], units: number, fires: boolean): Promise<void> => {
    await client.schedule({ id: id(name), topic, payload: { kind, name }, delayMs: Math.round(units * unitMs) });
    if (fires) expected.add(id(name));
  };
  const cancel = async (label: string, name: string, why: string): Promise<void> => {
    const done = await client.cancel(id(name));
    emit({ case: label, event: done ? `${why}: task cancelled in time` : `${why}: too late, the task had already fired`, id: id(name) });
  };

  const orders = async (): Promise<void> => {
    for (const n of [1, 2, 3, 4, 5]) await schedule(topics.orders, `o${n}`, 'order', 3, n % 2 === 1);
    emit({ case: 'orders', event: 'orders o1..o5 placed; each closes if unpaid after "30 min" (3 units)' });
    await pause(unitMs);
    await cancel('orders', 'o2', 'order o2 paid');
    await cancel('orders', 'o4', 'order o4 paid');
  };
  const reviews = async (): Promise<void> => {
    await pause(unitMs / 2);
    for (const n of [1, 2, 3]) await schedule(topics.reviews, `r${n}`, 'review', 4, n !== 2);
    emit({ case: 'reviews', event: 'orders r1..r3 delivered; each auto-rated if not reviewed within "48 h" (4 units)' });
    await pause(1.5 * unitMs);
    await cancel('reviews', 'r2', 'buyer reviewed order r2');
  };
  const connections = async (): Promise<void> => {
    const timeout = 2;
    for (const n of [1, 2, 3, 4]) await schedule(topics.connections, `c${n}`, 'connection', timeout, n >= 3);
    emit({ case: 'connections', event: 'connections c1..c4 open; offline after "30 s" (2 units) without a keepalive' });
    for (let tick = 1; tick <= 12; tick++) {
      await pause(unitMs / 2);
      const live = tick <= 4 ? ['c1', 'c2', 'c3'] : ['c1', 'c2'];
      for (const name of live) {
        if (!(await client.reschedule(id(name), { delayMs: Math.round(timeout * unitMs) })))
          emit({ case: 'connections', event: `keepalive from ${name} came too late: already offline`, id: id(name) });
      }
      if (tick === 4) emit({ case: 'connections', event: 'c3 stops sending keepalives (c1, c2 keep going)' });
    }
    for (const name of ['c1', 'c2']) await cancel('connections', name, `connection ${name} closed cleanly, still online`);
  };

  try {
    await Promise.all([orders(), reviews(), connections()]);
    const deadline = Date.now() + 3 * unitMs;
    while ([...expected].some((e) => !fired.has(e)) && Date.now() < deadline) await pause(50);
  } catch (error) {
    if (!interrupted.aborted) throw error;
  } finally {
    stop.abort();
    interrupted.removeEventListener('abort', onInterrupt);
    await Promise.allSettled(consumers);
    await cleanUp(client, out, Object.values(topics));
  }
  if (interrupted.aborted) throw new RequestFailed('DEMO_FAILED', 'demo: interrupted; its tasks were purged, none will fire');
  await Promise.all(consumers);
  const missing = [...expected].filter((e) => !fired.has(e));
  emit({ case: 'summary', event: `${fired.size} tasks fired, ${expected.size} expected; missing ${missing.length}, unexpected ${unexpected.length}` });
  if (missing.length > 0 || unexpected.length > 0)
    throw new RequestFailed('DEMO_FAILED', `demo: missing [${missing.join(', ')}], unexpected [${unexpected.join(', ')}]`);
}

/**
 * Purges every task of the demo's topics: pending first (those that have not fired, so
 * none fires later), then completed (with the cancelled ones) and dead.
 */
async function cleanUp(client: DelayQClient, out: Output, topics: readonly string[]): Promise<void> {
  let unfired = 0;
  let finished = 0;
  for (const topic of topics) {
    unfired += await client.topics.purge(topic, { state: 'pending' });
    for (const state of ['completed', 'dead'] as const) finished += await client.topics.purge(topic, { state });
  }
  const event = `purged ${unfired + finished} demo tasks (${unfired} that had not fired)`;
  out.result({ t: 0, case: 'cleanup', event }, () => `cleanup: ${event}`);
}
