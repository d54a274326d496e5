/**
 * The contract of a store several processes share (docs/stores.md, "Stores several
 * processes share"), as tests. Every shared store kind runs it unchanged with a backing:
 *
 *   runSharedConformance('redis', { namespace: async () => ({ url, storeOptions: { prefix } }), takeoverMs: 6_000 });
 *
 * Real processes (./shared-node.ts) open the store URL, and this
 * process opens it too as a producer: each case checks one promise of the contract across
 * them. Bounds are the store's documented ones (`takeoverMs`) or far from what a missing
 * mechanism would give (a task no process was told about waits for a loader pass, every
 * horizonMs / 4 = 15 s).
 */
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { isDelayQError } from '../core/errors.js';
import { PartialBatchError } from '../core/partial-batch.js';
import { DelayQueue } from '../open-queue.js';
import { FactsTail } from './facts-file.js';
import { hostileMessage, seededRandom, type MessageChannel } from './hostile-messages.js';

export interface SharedNamespace {
  /** The store URL every process opens. */
  readonly url: string;
  /** Store options of this namespace (a fresh one per case), passed to every process. */
  readonly storeOptions: Record<string, unknown>;
}

export interface SharedBacking {
  /** A fresh, empty namespace on the backing, for one case. */
  namespace(): Promise<SharedNamespace>;
  /** Within how long a dead process's partitions are owned again, as the store documents it. */
  readonly takeoverMs: number;
  /**
   * Makes one partition of a namespace refuse every write while reads still work (a shard
   * whose master cannot take writes); resolves with the undo. The case that needs it is
   * skipped for a backing without it.
   */
  refuseWrites?(space: SharedNamespace, partition: number): Promise<() => Promise<void>>;
  /** The partition of a task id in a namespace: the store's own router. */
  partitionOf?(space: SharedNamespace, id: string): number;
  /**
   * Sends `message` on a channel of the namespace as any client of the backing could
   * (PostgreSQL NOTIFY, Redis PUBLISH): `timers`, or the `ready` channel of `topic`; a
   * message the backing itself refuses (too long for NOTIFY) resolves all the same. The
   * message-fuzzing case is skipped for a backing without it.
   */
  send?(space: SharedNamespace, channel: MessageChannel, message: string, topic: string): Promise<void>;
}

/**
 * How a node process starts: the built suite (delayq/testing in a package) runs its built
 * node; this repository's sources, run through tsx, run the TypeScript one with tsx.
 */
const NODE_ARGS: readonly string[] =
  extname(fileURLToPath(import.meta.url)) === '.ts'
    ? ['--import', 'tsx', fileURLToPath(new URL('./shared-node.ts', import.meta.url))]
    : [fileURLToPath(new URL('./shared-node.js', import.meta.url))];

/** How late a task may fire and still be on time here: far below a loader pass (15 s). */
export const ON_TIME_MS = 2_000;

interface Delivery {
  readonly node: number;
  readonly runAt: number;
  readonly at: number;
  readonly attempt: number;
}

class Nodes {
  readonly children: ChildProcess[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'delayq-shared-'));
  private readonly tails: { node: number; tail: FactsTail }[] = [];
  private readonly poller = setInterval(() => this.poll(), 20);
  readonly deliveries = new Map<string, Delivery[]>();
  /** When each task's handler finished, by node. */
  readonly finished = new Map<string, { node: number; at: number }[]>();
  /** The schedule swaps of each node (with `planFacts`), by schedule id. */
  readonly swaps = new Map<string, { node: number; at: number }[]>();

  /** Starts a node per entry of `holdMs` (how long its handler holds each task). */
  async start(holdMs: readonly number[], space: SharedNamespace, topic: string, planFacts = false): Promise<void> {
    const ready: Promise<void>[] = [];
    for (const hold of holdMs) {
      const node = this.children.length;
      const factsPath = join(this.dir, `node-${node}.facts`);
      this.tails.push({ node, tail: new FactsTail(factsPath) });
      const config = JSON.stringify({ url: space.url, storeOptions: space.storeOptions, topic, holdMs: hold, concurrency: 50, factsPath, planFacts });
      const child = spawn(process.execPath, [...NODE_ARGS, config], { stdio: ['ignore', 'pipe', 'inherit'] });
      this.children.push(child);
      const lines = createInterface({ input: child.stdout });
      ready.push(
        new Promise<void>((resolve, reject) => {
          child.once('exit', (code) => reject(new Error(`node ${node} exited (${code}) before it was ready`)));
          lines.on('line', (line) => {
            if (line === 'READY') resolve();
          });
        }),
      );
    }
    await Promise.all(ready);
  }

  private poll(): void {
    for (const { node, tail } of this.tails)
      for (const line of tail.poll()) {
        const [tag, id, a, b, c] = line.split(' ');
        if (id === undefined) continue;
        if (tag === 'D') push(this.deliveries, id, { node, runAt: Number(a), at: Number(b), attempt: Number(c) });
        if (tag === 'A') push(this.finished, id, { node, at: Number(a) });
        if (tag === 'S') push(this.swaps, id, { node, at: Number(a) });
      }
  }

  /** Waits until every id was delivered and its handler finished, or `ms` passed. */
  async settled(ids: readonly string[], ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    while (ids.some((id) => !this.finished.has(id)) && Date.now() < deadline) await sleep(50);
  }

  async stop(): Promise<void> {
    await Promise.all(
      this.children.map(async (child) => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGCONT');
        child.kill('SIGTERM');
        const forced = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(forced);
      }),
    );
    clearInterval(this.poller);
    for (const { tail } of this.tails) tail.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}

function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list === undefined) map.set(key, [value]);
  else list.push(value);
}

export function runSharedConformance(name: string, backing: SharedBacking): void {
  describe(`shared store conformance: ${name}`, () => {
    const opened: { nodes: Nodes; producer: DelayQueue | null }[] = [];
    const open = async (holdMs: readonly number[], space: SharedNamespace, topic: string, planFacts = false): Promise<{ nodes: Nodes; producer: DelayQueue }> => {
      const nodes = new Nodes();
      const entry: { nodes: Nodes; producer: DelayQueue | null } = { nodes, producer: null };
      opened.push(entry);
      await nodes.start(holdMs, space, topic, planFacts);
      entry.producer = await DelayQueue.open({ store: space.url, storeOptions: space.storeOptions });
      return { nodes, producer: entry.producer };
    };
    after(async () => {
      for (const { nodes, producer } of opened) {
        await producer?.close();
        await nodes.stop();
      }
    });

    it('a task scheduled through one process fires on time in whichever process owns its partition', { timeout: 120_000 }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2], space, 'window');
      const start = Date.now();
      // Due within every process's loaded window (horizon 60 s): most land in partitions
      // the producer does not own, which only hear of them from the store.
      const tasks = Array.from({ length: 300 }, (_, i) => ({ id: `w-${i}`, topic: 'window', payload: null, runAt: start + 1_500 + (i % 100) * 10 }));
      await producer.scheduleMany(tasks);
      await nodes.settled(
        tasks.map((t) => t.id),
        30_000,
      );
      const missing = tasks.filter((t) => !nodes.deliveries.has(t.id)).map((t) => t.id);
      assert.deepEqual(missing, [], 'every task delivered');
      const all = [...nodes.deliveries.values()].flat();
      assert.deepEqual(
        all.filter((d) => d.at < d.runAt),
        [],
        'none before its runAt',
      );
      const late = all.filter((d) => d.at - d.runAt > ON_TIME_MS);
      assert.deepEqual(late, [], `every task within ${ON_TIME_MS} ms of its runAt`);
    });

    it('messages no delayq process sends, random and hostile, on every channel while tasks flow: no process dies, none is lost, early or late', { timeout: 180_000, skip: backing.send === undefined }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2], space, 'fuzzed');
      const seed = Date.now() % 1_000_000;
      const random = seededRandom(seed);
      const start = Date.now();
      const tasks = Array.from({ length: 300 }, (_, i) => ({ id: `f-${i}`, topic: 'fuzzed', payload: null, runAt: start + 1_000 + (i % 150) * 20 }));
      await producer.scheduleMany(tasks);
      // While they fall due (and a second batch is scheduled among the messages): messages
      // on both channels, each awaited, so the processes take them as they come.
      let later: typeof tasks = [];
      const scheduleLater = async (): Promise<void> => {
        const now = Date.now();
        later = Array.from({ length: 100 }, (_, i) => ({ id: `g-${i}`, topic: 'fuzzed', payload: null, runAt: now + 500 + i * 10 }));
        await producer.scheduleMany(later);
      };
      let sent = 0;
      // For 5 s, and on until 120 were sent: a loaded host sends fewer in 5 s (26 were seen),
      // and the test is of many messages, not of how fast they go.
      while (Date.now() < start + 5_000 || (sent < 120 && Date.now() < start + 60_000)) {
        if (sent === 150) await scheduleLater();
        const channel: MessageChannel = random() < 0.6 ? 'timers' : 'ready';
        await backing.send!(space, channel, hostileMessage(random, channel, tasks, Date.now()), 'fuzzed');
        sent++;
      }
      if (later.length === 0) await scheduleLater();
      const all = [...tasks, ...later];
      await nodes.settled(
        all.map((t) => t.id),
        30_000,
      );
      const where = `seed ${seed}, ${sent} messages`;
      assert.deepEqual(nodes.children.filter((child) => child.exitCode !== null || child.signalCode !== null).length, 0, `every process lives (${where})`);
      assert.deepEqual(all.filter((t) => !nodes.deliveries.has(t.id)).map((t) => t.id), [], `every task delivered (${where})`);
      const deliveries = all.map((t) => ({ id: t.id, runAt: t.runAt, at: nodes.deliveries.get(t.id)![0]!.at }));
      assert.deepEqual(deliveries.filter((d) => d.at < d.runAt), [], `none before its runAt (${where})`);
      assert.deepEqual(deliveries.filter((d) => d.at - d.runAt > ON_TIME_MS), [], `every task within ${ON_TIME_MS} ms of its runAt (${where})`);
      assert.ok(sent > 100, `messages sent (${where})`);
    });

    it('a partition that refuses writes holds back only its own tasks: the others fire on time, its writes answer STORE_UNAVAILABLE, and once it takes writes again its tasks are delivered, none early', { timeout: 120_000, skip: backing.refuseWrites === undefined || backing.partitionOf === undefined }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2], space, 'degraded');
      const partitionOf = (id: string): number => backing.partitionOf!(space, id);
      const start = Date.now();
      const before = Array.from({ length: 200 }, (_, i) => ({ id: `d-${i}`, topic: 'degraded', payload: null, runAt: start + 3_000 + (i % 100) * 20 }));
      await producer.scheduleMany(before);
      const degraded = partitionOf('d-0');
      const restore = await backing.refuseWrites!(space, degraded);
      let restored = false;
      try {
        // A batch over every partition: the degraded one's tasks are refused, the others' stored.
        const during = Array.from({ length: 100 }, (_, i) => ({ id: `e-${i}`, topic: 'degraded', payload: null, runAt: Date.now() + 2_000 + i * 10 }));
        const refused = await producer.scheduleMany(during).then(
          () => null,
          (error: unknown) => error,
        );
        assert.ok(refused instanceof PartialBatchError, `a batch over a partition that refuses writes rejects per partition: ${String(refused)}`);
        const failed = new Set((refused as PartialBatchError<unknown>).details?.['failedIndexes'] as number[]);
        assert.deepEqual(
          during.flatMap((t, i) => (failed.has(i) ? [t.id] : [])),
          during.filter((t) => partitionOf(t.id) === degraded).map((t) => t.id),
          'exactly the degraded partition\'s tasks are refused',
        );
        await assert.rejects(
          producer.schedule({ id: during.find((t) => partitionOf(t.id) === degraded)!.id, topic: 'degraded', payload: null, delayMs: 1_000 }),
          (error: unknown) => isDelayQError(error, 'STORE_UNAVAILABLE'),
        );
        assert.deepEqual(
          (await producer.stats()).unavailable.map((u) => u.partition),
          [degraded],
          'stats name the partition',
        );
        const healthy = [...before, ...during.filter((_, i) => !failed.has(i))].filter((t) => partitionOf(t.id) !== degraded);
        await nodes.settled(
          healthy.map((t) => t.id),
          20_000,
        );
        for (const task of healthy) {
          const first = nodes.deliveries.get(task.id)?.[0];
          assert.ok(first !== undefined, `${task.id} (a partition that takes writes) delivered while another refuses them`);
          assert.ok(first.at >= task.runAt, `${task.id} not early`);
          assert.ok(first.at - task.runAt <= ON_TIME_MS, `${task.id} within ${ON_TIME_MS} ms of its runAt: ${first.at - task.runAt} ms`);
        }
        const held = before.filter((t) => partitionOf(t.id) === degraded);
        assert.ok(held.length > 0);
        assert.deepEqual(
          held.filter((t) => nodes.deliveries.has(t.id)).map((t) => t.id),
          [],
          'the degraded partition delivered nothing while it refused writes',
        );
        await restore();
        restored = true;
        await nodes.settled(
          held.map((t) => t.id),
          20_000,
        );
        for (const task of held) {
          const list = nodes.deliveries.get(task.id) ?? [];
          assert.equal(list.length, 1, `${task.id} delivered once after the partition took writes again: ${JSON.stringify(list)}`);
          assert.ok(list[0]!.at >= task.runAt, `${task.id} not early`);
        }
      } finally {
        if (!restored) await restore();
      }
    });

    it('each ready task is reserved once across processes', { timeout: 120_000 }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2, 2], space, 'once');
      const now = Date.now();
      const tasks = Array.from({ length: 600 }, (_, i) => ({ id: `o-${i}`, topic: 'once', payload: null, runAt: now + 500 }));
      await producer.scheduleMany(tasks);
      await nodes.settled(
        tasks.map((t) => t.id),
        30_000,
      );
      await sleep(500);
      for (const task of tasks) {
        const list = nodes.deliveries.get(task.id) ?? [];
        assert.equal(list.length, 1, `${task.id} delivered ${list.length} times: ${JSON.stringify(list)}`);
        assert.equal(list[0]!.attempt, 1);
      }
    });

    it("a dead owner's partitions are taken over within the documented time, and its tasks delivered", { timeout: 120_000 }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2], space, 'takeover');
      const start = Date.now();
      const tasks = Array.from({ length: 200 }, (_, i) => ({ id: `t-${i}`, topic: 'takeover', payload: null, runAt: start + 2_000 + (i % 50) * 20 }));
      await producer.scheduleMany(tasks);
      // The first node dies holding its partitions and their loaded timers.
      nodes.children[0]!.kill('SIGKILL');
      const killedAt = Date.now();
      await nodes.settled(
        tasks.map((t) => t.id),
        backing.takeoverMs + 30_000,
      );
      const missing = tasks.filter((t) => !nodes.finished.has(t.id)).map((t) => t.id);
      assert.deepEqual(missing, [], 'every task delivered after the kill');
      const bound = killedAt + backing.takeoverMs + ON_TIME_MS;
      for (const task of tasks) {
        const first = nodes.deliveries.get(task.id)![0]!;
        assert.ok(first.at >= task.runAt, `${task.id} early`);
        assert.ok(first.at <= Math.max(task.runAt + ON_TIME_MS, bound), `${task.id} delivered ${first.at - task.runAt} ms after its runAt (taken over late)`);
      }
    });

    it("a zombie's writes are fenced: a process stopped past its lease and its reservations neither settles nor reserves again what others took over", { timeout: 120_000 }, async () => {
      const space = await backing.namespace();
      // The first node alone takes the tasks, and is stopped while its handler holds them
      // (3 s each, within their 4 s ttr); then a second node, which settles at once, starts.
      const { nodes, producer } = await open([3_000], space, 'zombie');
      const now = Date.now();
      const tasks = Array.from({ length: 40 }, (_, i) => ({ id: `z-${i}`, topic: 'zombie', payload: null, runAt: now + 300, ttrMs: 4_000 }));
      await producer.scheduleMany(tasks);
      const zombie = nodes.children[0]!;
      const deadline = Date.now() + 10_000;
      while (nodes.deliveries.size === 0 && Date.now() < deadline) await sleep(20);
      zombie.kill('SIGSTOP');
      const stoppedAt = Date.now();
      await nodes.start([2], space, 'zombie');
      const held = [...nodes.deliveries.entries()].filter(([, list]) => list.some((d) => d.node === 0)).map(([id]) => id);
      assert.ok(held.length > 0, 'the zombie held reservations when it stopped');
      // Past its lease and the reservations' ttr: the other node takes over and redelivers.
      await nodes.settled(tasks.map((t) => t.id).filter((id) => !held.includes(id)), backing.takeoverMs + 30_000);
      const retakenBy = Date.now() + backing.takeoverMs + 30_000;
      while (held.some((id) => !(nodes.finished.get(id) ?? []).some((f) => f.node === 1)) && Date.now() < retakenBy) await sleep(50);
      for (const id of held) assert.ok((nodes.finished.get(id) ?? []).some((f) => f.node === 1), `${id}, held by the zombie, was delivered again and finished by the live node`);
      // Stopped past its lease too, so its partitions have been taken over when it wakes.
      await sleep(Math.max(0, stoppedAt + backing.takeoverMs + 1_000 - Date.now()));
      const resumedAt = Date.now();
      zombie.kill('SIGCONT');
      // The zombie finishes its stale handlers (its acks are refused) and keeps running.
      await sleep(5_000);
      // Once per attempt: the zombie may still run a handler of the attempt it reserved before
      // it stopped (its reply was read after it woke), never one of an attempt another took.
      const attempts = new Map<string, number[]>();
      for (const [id, list] of nodes.deliveries) for (const d of list) push(attempts, `${id}#${d.attempt}`, d.node);
      const twice = [...attempts.entries()].filter(([, by]) => by.length > 1);
      assert.deepEqual(twice, [], 'no attempt of a task delivered twice');
      const lateNewAttempts = [...nodes.deliveries.entries()].flatMap(([id, list]) => list.filter((d) => d.node === 0 && d.at >= resumedAt && d.attempt > 1).map((d) => ({ id, ...d })));
      assert.deepEqual(lateNewAttempts, [], 'the zombie reserves nothing of what the live node took over');
      for (const id of held) {
        const record = await producer.get(id);
        assert.equal(record?.state, 'completed', `${id} completed`);
        assert.equal(record?.attempts, 2, `${id}: the zombie's attempt and the live node's, no third`);
      }
    });

    it("recurring schedules are planned by their partition's owner alone; after its SIGKILL the new owners plan them, and every occurrence is delivered once, none lost", { timeout: 180_000 }, async () => {
      const space = await backing.namespace();
      const { nodes, producer } = await open([2, 2, 2], space, 'cron', true);
      // Every node has read the schedules (scheduleSyncMs, 5 s) well before the first occurrence.
      const first = Math.ceil(Date.now() / 1_000) * 1_000 + 9_000;
      const seconds = 20;
      const ids = Array.from({ length: 24 }, (_, i) => `every-${i}`);
      await producer.schedules.upsertMany(ids.map((id) => ({ id, topic: 'cron', everyMs: 1_000, startAt: first, endAt: first + seconds * 1_000 })));
      // The producer leaves (its close hands its partitions over): the nodes alone plan.
      await producer.close();
      await sleep(Math.max(0, first + 5_000 - Date.now()));
      const killAt = Date.now();
      const plannedBy = new Map<string, number[]>();
      for (const [id, list] of nodes.swaps)
        for (const { node, at } of list) if (at >= first - 1_000 && at < killAt) push(plannedBy, id, node);
      const planners = new Map([...plannedBy].map(([id, by]) => [id, [...new Set(by)]]));
      assert.deepEqual(
        ids.filter((id) => (planners.get(id) ?? []).length !== 1),
        [],
        `before the kill, each schedule planned by exactly one node: ${JSON.stringify(Object.fromEntries(planners))}`,
      );
      const perNode = [0, 1, 2].map((node) => ids.filter((id) => planners.get(id)![0] === node));
      const victim = perNode.reduce((best, list, node) => (list.length > perNode[best]!.length ? node : best), 0);
      nodes.children[victim]!.kill('SIGKILL');

      const expected = ids.flatMap((id) => Array.from({ length: seconds }, (_, k) => `${id}:${first + k * 1_000}`));
      await nodes.settled(expected, Math.max(0, first + seconds * 1_000 - Date.now()) + backing.takeoverMs + 30_000);
      await sleep(1_500); // a late duplicate would show now
      const delivered = [...nodes.deliveries.keys()];
      assert.deepEqual(expected.filter((id) => !nodes.deliveries.has(id)), [], 'every occurrence delivered, none lost');
      assert.deepEqual(delivered.filter((id) => !expected.includes(id)), [], 'no occurrence outside the schedules');
      for (const id of expected) {
        const list = nodes.deliveries.get(id)!;
        const attempts = list.map((d) => d.attempt);
        assert.equal(new Set(attempts).size, attempts.length, `${id}: no attempt delivered twice: ${JSON.stringify(list)}`);
        // A second attempt only for a delivery the killed node had begun (a redelivery, not a second occurrence).
        if (list.length > 1) assert.equal(list[0]!.node, victim, `${id} delivered again, though its first delivery was not the killed node's: ${JSON.stringify(list)}`);
      }
      for (const id of perNode[victim]!) {
        const after = (nodes.swaps.get(id) ?? []).filter((s) => s.at > killAt && s.node !== victim);
        assert.ok(after.length > 0, `${id}, the killed node's, planned by another node after the kill`);
      }
    });
  });
}
