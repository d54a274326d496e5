/**
 * Limits set on a running fleet (issue 46): three real delayq processes consume one topic of
 * a shared store (test/stores/fixtures/limits-child.ts), one of them sets a limit or a pause
 * through its own queue, and tasks fall due after that call returned. Every delivery's start
 * and end, written by the processes to their facts files, are judged here: at most
 * `concurrency` in flight at any moment across the processes, never more than `burst` +
 * `rate` per second in any window from the first delivery, nothing delivered while paused.
 * The store tests (test/stores/redis, test/stores/postgres) run `limitsAcrossProcesses`.
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DelayQueue } from '../../src/open-queue.js';
import { FactsTail } from '../../src/testing/facts-file.js';

export interface Run {
  readonly id: string;
  readonly child: number;
  readonly start: number;
  end: number;
}

/** Three processes on `url` working on `topic`, and a command line into each. */
class Fleet {
  readonly runs = new Map<string, Run[]>();
  private readonly children: ChildProcess[] = [];
  private readonly lines: Interface[] = [];
  private readonly tails: FactsTail[] = [];
  private readonly replies: ((line: string) => void)[][] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'delayq-limits-'));

  async start(url: string, storeOptions: object, topic: string, handlerMs: number, concurrency: number): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let n = 0; n < 3; n++) {
      const facts = join(this.dir, `child-${n}.facts`);
      this.tails.push(new FactsTail(facts));
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', 'test/stores/fixtures/limits-child.ts', url, JSON.stringify(storeOptions), topic, facts, String(handlerMs), String(concurrency)],
        { stdio: ['pipe', 'pipe', 'inherit'] },
      );
      this.children.push(child);
      const lines = createInterface({ input: child.stdout });
      this.lines.push(lines);
      const waiting: ((line: string) => void)[] = [];
      this.replies.push(waiting);
      ready.push(
        new Promise<void>((resolve) =>
          lines.on('line', (line) => {
            if (line === 'READY') resolve();
            else waiting.shift()?.(line);
          }),
        ),
      );
    }
    await Promise.all(ready);
  }

  /** Sends `line` to process `n` and answers when its call returned (the time it returned, its clock). */
  async command(n: number, line: string): Promise<number> {
    const reply = new Promise<string>((resolve) => this.replies[n]!.push(resolve));
    this.children[n]!.stdin!.write(`${line}\n`);
    const answer = await reply;
    assert.match(answer, /^DONE \d+$/, `process ${n}: ${line} -> ${answer}`);
    return Number(answer.slice(5));
  }

  /** Reads what the processes wrote since the last poll. */
  poll(): void {
    this.tails.forEach((tail, child) => {
      for (const line of tail.poll()) {
        const [tag, id, at] = line.split(' ');
        if (id === undefined || at === undefined) continue;
        const list = this.runs.get(id) ?? [];
        if (tag === 'S') list.push({ id, child, start: Number(at), end: Infinity });
        else if (tag === 'E') {
          const open = list.find((run) => run.child === child && run.end === Infinity);
          if (open) open.end = Number(at);
        }
        this.runs.set(id, list);
      }
    });
  }

  /** Waits until every id in `ids` has ended a run, or `ms` passed. */
  async until(ids: readonly string[], ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    for (;;) {
      this.poll();
      if (ids.every((id) => this.runs.get(id)?.some((run) => run.end !== Infinity))) return;
      if (Date.now() > deadline) return;
      await sleep(50);
    }
  }

  all(): Run[] {
    return [...this.runs.values()].flat();
  }

  async stop(): Promise<void> {
    for (const child of this.children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    for (const lines of this.lines) lines.close();
    for (const tail of this.tails) tail.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The most runs in flight at once, across processes (a run holds its slot from start to end). */
export function mostInFlight(runs: readonly Run[]): number {
  const events = runs.flatMap((run) => [
    [run.start, 1],
    [run.end, -1],
  ]);
  // At equal times an end goes first: the slot is free when the next starts.
  events.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
  let now = 0;
  let most = 0;
  for (const [, delta] of events) most = Math.max(most, (now += delta!));
  return most;
}

/**
 * The worst window of starts against a token bucket: for each pair of starts i <= j, the
 * starts in [t_i, t_j] minus what the bucket allows there (burst + rate * (t_j - t_i) /
 * periodMs, with `slackMs` for the time between an admission and its handler's start).
 * Positive: a window had that many deliveries too many.
 */
export function worstBurst(starts: readonly number[], rate: number, burst: number, periodMs: number, slackMs: number): { excess: number; window: number } {
  const sorted = [...starts].sort((a, b) => a - b);
  let excess = -Infinity;
  let window = 0;
  for (let i = 0; i < sorted.length; i++)
    for (let j = i; j < sorted.length; j++) {
      const allowed = burst + (rate * (sorted[j]! - sorted[i]! + slackMs)) / periodMs;
      const over = j - i + 1 - allowed;
      if (over > excess) [excess, window] = [over, sorted[j]! - sorted[i]!];
    }
  return { excess, window };
}

export interface SharedStoreUnderTest {
  readonly url: string;
  readonly storeOptions: object;
  /** Drops what the tests made. */
  readonly cleanup: () => Promise<void>;
}

/**
 * The cases, on a store `open` makes for them. The processes start idle, their workers
 * waiting in the store for work, as a running fleet's are; each case sets a limit through
 * process 2 and schedules the tasks after that call returned.
 */
export function limitsAcrossProcesses(name: string, open: () => Promise<SharedStoreUnderTest>): void {
  describe(`limits set on a running fleet hold from the first wave: ${name}, three processes`, () => {
    let shared: SharedStoreUnderTest;
    let producer: DelayQueue;
    const fleets: Fleet[] = [];
    before(async () => {
      shared = await open();
      producer = await DelayQueue.open({ store: shared.url, storeOptions: shared.storeOptions });
    });
    after(async () => {
      for (const fleet of fleets) await fleet.stop();
      await producer?.close();
      await shared?.cleanup();
    });

    async function fleetOn(topic: string, handlerMs: number): Promise<Fleet> {
      const fleet = new Fleet();
      fleets.push(fleet);
      await fleet.start(shared.url, shared.storeOptions, topic, handlerMs, 50);
      // Let every worker settle into waiting in the store.
      await sleep(500);
      return fleet;
    }

    async function scheduleNow(topic: string, n: number): Promise<string[]> {
      const tasks = Array.from({ length: n }, (_, i) => ({ id: `${topic}-${i}`, topic, ttrMs: 30_000 }));
      await producer.scheduleMany(tasks);
      return tasks.map((t) => t.id);
    }

    it('a concurrency of 5 set through one process holds in all three for the first wave (26-100 were in flight)', { timeout: 120_000 }, async () => {
      const fleet = await fleetOn('cc', 200);
      await fleet.command(2, 'limits cc {"concurrency":5}');
      const ids = await scheduleNow('cc', 60);
      await fleet.until(ids, 30_000);
      const runs = fleet.all();
      const most = mostInFlight(runs);
      console.log(`# ${name} concurrency 5: ${runs.length} runs of ${ids.length} tasks, at most ${most} in flight, per process ${[0, 1, 2].map((n) => runs.filter((r) => r.child === n).length).join('/')}`);
      assert.equal(runs.filter((r) => r.end !== Infinity).length, ids.length, 'every task ran once');
      assert.ok(most <= 5, `at most 5 in flight across the processes: ${most}`);
    });

    it('a rate of 20/s with burst 20 set through one process holds from the first delivery (139 went in the first second)', { timeout: 120_000 }, async () => {
      const fleet = await fleetOn('rate', 10);
      await fleet.command(2, 'limits rate {"rate":20,"burst":20}');
      const ids = await scheduleNow('rate', 70);
      await fleet.until(ids, 30_000);
      const starts = fleet.all().map((r) => r.start).sort((a, b) => a - b);
      const firstSecond = starts.filter((t) => t < starts[0]! + 1_000).length;
      const worst = worstBurst(starts, 20, 20, 1_000, 25);
      console.log(`# ${name} rate 20/s burst 20: ${starts.length} deliveries, ${firstSecond} in the first second, worst window ${worst.excess.toFixed(2)} over (${worst.window} ms)`);
      assert.equal(starts.length, ids.length);
      assert.ok(firstSecond <= 40, `at most burst + rate in the first second: ${firstSecond}`);
      assert.ok(worst.excess < 1, `no window above burst + rate x its length: ${worst.excess.toFixed(2)} over, in ${worst.window} ms`);
    });

    it('a concurrency set while deliveries are in flight counts them: no delivery starts after the call while 5 or more are in flight', { timeout: 120_000 }, async () => {
      const fleet = await fleetOn('busy', 2_500);
      const before = await scheduleNow('busy', 40);
      await sleep(700);
      fleet.poll();
      assert.ok(fleet.all().length >= 30, `a busy fleet: ${fleet.all().length} started`);
      const returned = await fleet.command(1, 'limits busy {"concurrency":5}');
      const later = (await producer.scheduleMany(Array.from({ length: 10 }, (_, i) => ({ id: `busy-late-${i}`, topic: 'busy', ttrMs: 30_000 })))).map((r) => r.id);
      await fleet.until([...before, ...later], 60_000);
      const runs = fleet.all();
      const after = runs.filter((run) => run.start >= returned);
      const crowded = after.filter((run) => runs.filter((other) => other !== run && other.start <= run.start && other.end > run.start).length >= 5);
      console.log(`# ${name} concurrency 5 set on 40 in flight: ${after.length} started after the call, ${crowded.length} of them with 5 or more in flight`);
      assert.equal(runs.length, 50);
      assert.deepEqual(crowded.map((run) => run.id), [], 'none started while 5 were in flight');
    });

    it('a pause set through one process holds in all three for tasks already due, and a resume lets them go', { timeout: 120_000 }, async () => {
      const fleet = await fleetOn('held', 10);
      await fleet.command(2, 'pause held');
      const ids = await scheduleNow('held', 30);
      await sleep(1_500);
      fleet.poll();
      assert.equal(fleet.all().length, 0, 'nothing delivered while paused');
      await fleet.command(0, 'resume held');
      await fleet.until(ids, 20_000);
      assert.equal(fleet.all().length, ids.length);
    });
  });
}
