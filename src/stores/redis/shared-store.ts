/**
 * The Redis store as several delayq processes share it (SharedDispatch): each process
 * owns some shards (lease-keeper.ts) and keeps only their timers; due tasks are promoted
 * into per-topic ready lists in Redis that consumers of any process take from.
 *
 *   producer (any process) --schedule--> shard s --PUBLISH timers--> owner of s: wheel
 *   owner's wheel fires ----promote.lua--> ready list (s, topic) --PUBLISH ready--> consumers
 *   consumer (any process) --take.lua--> reserved (claimed once, whatever the duplicates)
 *
 * A timer scheduled into a shard another process owns reaches the owner's wheel through
 * the timers channel at once, so it fires on time rather than at the owner's next load.
 * When a process dies, the others take its shards within the lease time and load their
 * timers; its reservations are expired by the owner's recoverer (afterTick) once overdue.
 */
import type { Logger, ScheduleOutcome, SharedDispatch } from '../../core/ports.js';
import type { TaskRecord, TimerRef } from '../../core/task/model.js';
import { decodeTask } from './codec.js';
import { nextNonce } from './nonce.js';
import { loadDueScript, promoteScript, releaseScript, takeScript } from './commands.js';
import { ShardBatcher } from './batcher.js';
import type { LeaseKeeper } from './lease-keeper.js';
import { KeptTasks } from './kept-tasks.js';
import { planTakes, type TakeStep } from './take-plan.js';
import { ReadyWaiters } from './ready-waiters.js';
import { MAX_SCRIPT_BATCH, RedisStore, type RedisStoreConfig } from './redis-store.js';
import { groupByShard, shardOf } from './router.js';
import type { Subscriber } from './subscriber.js';

/** Reservations overdue by this much are expired by the shard owner (the consumer's own wheel had its chance). */
const RECOVER_GRACE_MS = 2_000;
const SWEEP_MS = 2_000;
const MAX_TAKE = 1_000;
/**
 * A consumer with the default ttr takes up to this many at once and keeps the surplus for
 * its next call: a worker whose slots free up one by one then needs no round trip per task.
 */
const PREFETCH = 64;
/** Kept tasks nobody took within this long go back to the shared lists (a pull consumer may not come back soon). */
const KEEP_MS = 100;
/**
 * A take asks a shard for this many ids unless it is known to hold fewer (take-plan.ts): one consumer asks a few shards (in
 * rotation) for larger batches rather than every shard for a handful, so each delivered
 * task costs fewer script calls for its take and, later, for its ack. 32 rather than 16:
 * in five alternating pairs of S2's pattern, 19.1-22.3 k fired/s against 15.9-19.4 k, and
 * ~3-4 us less Redis CPU per delivered task (auto-pipelining off).
 */
const TAKE_SHARE = 32;
/**
 * Promotions reserve for a local consumer that is asking up to this many times the tasks it
 * asked for; the surplus is kept for its next calls (KEEP_MS at most). A stall of a few
 * tens of ms (a GC pause, a busy host) makes several ticks' tasks due at once. At 1x (64)
 * they overflowed into the shared lists and waited there for takes: in S3's pattern 2-4%
 * of the tasks, at p50 lateness ~30 ms and up to 200-800 ms. At 4x none did in two runs.
 * 32x since 2026-11-24, together with the worker's SETTLEMENTS_PER_SLOT 32: at 50,000 due
 * a second (S2) the window's first ~300 ms sent about half the due tasks to the shared
 * lists, and each take, promote and ack then carried fewer tasks; p99 55-140 ms on warm
 * code. Raising only one of the two changed nothing; both at 16x: p99 9.5-24.5 ms warm,
 * 113-152 ms cold; at 32x: 28-33 ms cold; 64x no better (docs/redis.md).
 */
const PROMOTE_AHEAD = 32;
/**
 * A local consumer counts as asking for this long after its last call returned. Until
 * 2026-11-24 it was until the next turn of the event loop: a worker busy starting its
 * handlers, or waiting for its acks (worker.ts SETTLEMENTS_PER_SLOT), was not asking when
 * the next tick's tasks fell due, so promote pushed them to the shared lists, and there
 * they waited behind the tasks promote kept for the worker, which it served first. In
 * S2's pattern, 20% of the tasks went that way at a steady 50,000 a second, 3,454 of 6,784
 * in one 100 ms of the window's start, and those waited for takes for up to ~1 s. At 50
 * ms none did (docs/redis.md). What a lingering ask reserves and no consumer takes goes
 * back to the lists after KEEP_MS, which is longer.
 */
const LINGER_MS = 50;
/**
 * A background take (drainBacklog) asks for up to this many of a topic's list backlog,
 * up to DRAIN_SHARE from each flagged shard: a few calls of many ids each.
 */
const DRAIN_FETCH = 512;
const DRAIN_SHARE = 128;

export interface SharedParts {
  readonly keeper: LeaseKeeper;
  readonly subscriber: Subscriber;
  readonly now: () => number;
  readonly logger: Logger;
}

export class SharedRedisStore extends RedisStore implements SharedDispatch {
  private readonly listeners: ((ref: TimerRef) => void)[] = [];
  readonly waiters: ReadyWaiters;
  private parts: SharedParts | null = null;
  private readonly promotions: ShardBatcher<{ ref: TimerRef; now: number }, void>;
  /**
   * Per topic: tasks local consumers (default ttr) are asking for right now, waiting or
   * with takes in flight. Counting only the waiting ones sent every task that fell due
   * during a take to the shared lists, a take or more later (S3's pattern: 12% of the
   * tasks, p50 / p99 lateness 15.7 / 189 ms against 4.1 / 11.7 ms for the others).
   */
  private readonly askingWant = new Map<string, number>();
  /** Per topic: how many of those promotions in flight have already promised to reserve. */
  private readonly promised = new Map<string, number>();
  /** Per topic: what the last finished call of a local consumer asked for, and until when it still counts (LINGER_MS). */
  private readonly lingering = new Map<string, { want: number; until: number }>();
  /** Tasks reserved for this process's consumers (by promote, or a take's surplus), not yet handed out. */
  private readonly kept = new KeptTasks();
  private readonly releaseTimers = new Map<string, NodeJS.Timeout>();
  /** Where the next take starts among the flagged shards (rotates so every shard is drained). */
  private takeRotor = 0;
  /** Per topic: the background take in flight (drainBacklog), awaited by close(). */
  private readonly drains = new Map<string, Promise<void>>();

  constructor(config: RedisStoreConfig) {
    super(config);
    this.waiters = new ReadyWaiters(this.shardCount, SWEEP_MS);
    this.promotions = new ShardBatcher((shard, items) => this.promoteShard(shard, items), MAX_SCRIPT_BATCH);
  }

  /** Wired by openRedisStore once the keeper and subscriber exist (they call back into the store). */
  attach(parts: SharedParts): void {
    this.parts = parts;
  }

  onRemoteTimer(listener: (ref: TimerRef) => void): void {
    this.listeners.push(listener);
  }

  async promote(refs: readonly TimerRef[], now: number): Promise<void> {
    this.assertOpen();
    const keeper = this.parts?.keeper;
    if (!keeper) return;
    await Promise.all(
      [...groupByShard(refs, (r) => r.id, this.shardCount)].map(async ([shard, group]) => {
        // Not ours: the owner has these timers and promotes them.
        if (!keeper.owns(shard)) return;
        for (let from = 0; from < group.length; from += MAX_SCRIPT_BATCH)
          await this.promotions.submit(
            shard,
            group.slice(from, from + MAX_SCRIPT_BATCH).map((ref) => ({ ref, now })),
          );
      }),
    );
  }

  private async promoteShard(shard: number, items: readonly { ref: TimerRef; now: number }[]): Promise<void[]> {
    const keeper = this.parts?.keeper;
    const value = keeper?.leaseValue(shard);
    const done = items.map(() => undefined);
    if (!keeper || value === undefined) return done;
    // Each ref was due at its own now, so the latest now of the batch loses none.
    const now = Math.max(...items.map((i) => i.now));
    const refs = items.map((i) => i.ref);
    // Local consumers waiting now get due tasks reserved in this same call (timer to
    // consumer in one round trip); the rest go to the shared lists.
    const allotted = new Map<string, number>();
    const claimFor = (topic: string): number => {
      const free = this.demand(topic) - this.kept.size(topic) - (this.promised.get(topic) ?? 0);
      const n = Math.max(0, Math.min(free, refs.length));
      allotted.set(topic, n);
      this.promised.set(topic, (this.promised.get(topic) ?? 0) + n);
      return n;
    };
    let result: Awaited<ReturnType<typeof promoteScript>>;
    try {
      result = await promoteScript(this.client, this.shard(shard), {
        leaseValue: value,
        now,
        entries: refs,
        channelOf: (t) => this.keys.readyChannel(t),
        message: `${shard} ${keeper.owner}`,
        claimFor,
        nonce: `${nextNonce()}.`,
      });
    } finally {
      for (const [topic, n] of allotted) this.promised.set(topic, (this.promised.get(topic) ?? 0) - n);
    }
    if (!result.owned) {
      keeper.markLost(shard);
      return done;
    }
    for (const [id, body] of result.claimed) {
      const record = decodeTask(id, body).record;
      this.keep(record.topic, [record]);
      this.waiters.wake(record.topic);
    }
    // Local consumers need not wait for the PUBLISH round trip.
    for (const [topic, n] of result.pushed) this.waiters.notify(topic, shard, n);
    return done;
  }

  async reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<TaskRecord[]> {
    this.assertOpen();
    await this.parts?.subscriber.watch(topic);
    const want = Math.min(max, MAX_TAKE);
    if (ttrMs !== undefined) return this.reserveLoop(topic, want, now, ttrMs, signal);
    // Promotions may reserve for this call directly (promoteShard) for as long as it asks:
    // while it waits, and while its takes are in flight.
    const asking = PROMOTE_AHEAD * want;
    this.askingWant.set(topic, (this.askingWant.get(topic) ?? 0) + asking);
    try {
      return await this.reserveLoop(topic, want, now, ttrMs, signal);
    } finally {
      // Still asking for LINGER_MS: a consumer that has handlers to run, or acks to wait
      // for, asks again a little later, and a promotion that runs between its two calls
      // should not find nobody asking.
      this.askingWant.set(topic, (this.askingWant.get(topic) ?? 0) - asking);
      this.lingering.set(topic, { want: asking, until: performance.now() + LINGER_MS });
    }
  }

  /** How many tasks of `topic` local consumers are asking for: calls waiting or in flight, or the last one's within LINGER_MS. */
  private demand(topic: string): number {
    const asking = this.askingWant.get(topic) ?? 0;
    const lingering = this.lingering.get(topic);
    return lingering !== undefined && lingering.until > performance.now() ? Math.max(asking, lingering.want) : asking;
  }

  private async reserveLoop(topic: string, want: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<TaskRecord[]> {
    // Prefetch only for the default ttr: the surplus is kept for the next caller of the topic.
    const fetch = ttrMs === undefined ? Math.max(want, Math.min(PREFETCH, MAX_TAKE)) : want;
    const nonce = nextNonce();
    let attempt = 0;
    for (;;) {
      if (this.isClosed) return [];
      if (ttrMs === undefined && this.kept.size(topic) > 0) {
        this.drainBacklog(topic, now);
        return this.kept.take(topic, want);
      }
      // Several shards that may hold ready ids are asked at once (take-plan.ts), starting
      // at a rotating shard so none is left behind.
      const flagged = this.waiters.candidates(topic);
      const start = flagged.length === 0 ? 0 : this.takeRotor++ % flagged.length;
      const steps = planTakes(flagged, start, fetch, TAKE_SHARE, (shard) => this.waiters.backlog(topic, shard));
      const { claimed, retryAt } = await this.takeSteps(topic, steps, now(), ttrMs, () => `${nonce}${(attempt++).toString(36)}.`);
      if (claimed.length > want) this.keep(topic, claimed.splice(want));
      if (claimed.length > 0) return claimed;
      if (signal.aborted) return [];
      if (this.waiters.candidates(topic).length > 0 && retryAt === 0) continue;
      await this.waiters.wait(topic, signal, retryAt > 0 ? Math.max(1, retryAt - now()) : undefined);
    }
  }

  /**
   * Runs the planned takes of `topic` at once and records what each shard has left; the
   * claimed records, and the earliest time a shard said to come back (0: none did).
   */
  private async takeSteps(
    topic: string,
    steps: readonly TakeStep[],
    at: number,
    ttrMs: number | undefined,
    nextNonce: () => string,
  ): Promise<{ claimed: TaskRecord[]; retryAt: number }> {
    const epoch = this.waiters.epoch(topic);
    const takes = await Promise.all(steps.map((step) => takeScript(this.client, this.shard(step.shard), topic, at, step.count, ttrMs, nextNonce())));
    let retryAt = 0;
    const claimed: TaskRecord[] = [];
    takes.forEach((taken, i) => {
      this.waiters.update(topic, steps[i]!.shard, taken.retryAt > 0 ? Math.max(1, taken.remaining) : taken.remaining, epoch);
      if (taken.retryAt > 0) retryAt = retryAt === 0 ? taken.retryAt : Math.min(retryAt, taken.retryAt);
      for (const [id, body] of taken.claimed) claimed.push(decodeTask(id, body).record);
    });
    return { claimed, retryAt };
  }

  /**
   * Tasks promote pushed to the shared lists (the local consumers had asked for fewer than
   * fell due, or for none) were taken only once `kept` was empty, and while a burst lasts
   * promote keeps refilling it: in S2's pattern the pushed ones, up to 4,699 in 100 ms of
   * the window's start, waited for the burst to pass, 500-700 ms. So a consumer served from
   * `kept` while its topic's lists hold a backlog starts one take in the background that
   * brings some of it into `kept`, ahead of what is there. One per topic at a time; a
   * failure leaves the tasks in the lists for the next take.
   */
  private drainBacklog(topic: string, now: () => number): void {
    if (this.drains.has(topic) || this.isClosed) return;
    // Only to top up `kept` to what the consumers ask for, once it is half empty: more
    // would go back after KEEP_MS and be taken again (with a slow consumer of one slot,
    // an unbounded version took each task ~4 times).
    const demand = this.demand(topic);
    const room = demand - this.kept.size(topic) - (this.promised.get(topic) ?? 0);
    if (room < demand / 2) return;
    const flagged = this.waiters.candidates(topic);
    if (flagged.length === 0) return;
    const steps = planTakes(flagged, this.takeRotor++ % flagged.length, Math.min(DRAIN_FETCH, room), DRAIN_SHARE, (shard) =>
      this.waiters.backlog(topic, shard),
    );
    const nonce = nextNonce();
    let step = 0;
    const drain = this.takeSteps(topic, steps, now(), undefined, () => `${nonce}${(step++).toString(36)}.`)
      .then(({ claimed }) => {
        if (claimed.length === 0) return;
        // Ahead of the kept ones: they fell due before promote began to push.
        this.kept.addFirst(topic, claimed, performance.now());
        this.armRelease(topic);
        this.waiters.wake(topic);
      })
      .catch((error: unknown) => this.parts?.logger.warn({ err: error, topic }, 'redis: a background take failed; its tasks stay in the ready lists'))
      .finally(() => this.drains.delete(topic));
    this.drains.set(topic, drain);
  }

  // ---------------------------------------------------------------------------------
  // Hooks of RedisStore

  protected override loadableShards(): number[] {
    return this.parts?.keeper.owned() ?? [];
  }

  protected override afterSchedule(outcomes: readonly ScheduleOutcome[], now: number): void {
    this.publishTimers(
      outcomes.flatMap((o) => (o.ref ? [o.ref] : [])),
      now,
    );
  }

  protected override afterMove(ref: TimerRef, now: number): void {
    this.publishTimers([ref], now);
  }

  override async close(): Promise<void> {
    this.waiters.wakeAllTopics();
    // What a background take brings goes to `kept`, which is given back below.
    await Promise.all(this.drains.values());
    if (!this.isClosed) await Promise.all(this.kept.topics().map((topic) => this.release(topic, Infinity))).catch(() => undefined);
    await super.close();
  }

  /** Keeps reserved tasks for the next consumer of `topic` in this process, for KEEP_MS at most each. */
  private keep(topic: string, records: readonly TaskRecord[]): void {
    this.kept.add(topic, records, performance.now());
    this.armRelease(topic);
  }

  /** A timer for when the oldest kept task of `topic` has been kept KEEP_MS. */
  private armRelease(topic: string): void {
    const oldest = this.kept.oldestAt(topic);
    if (oldest === undefined || this.releaseTimers.has(topic)) return;
    const timer = setTimeout(
      () => {
        this.releaseTimers.delete(topic);
        // On failure they stay reserved: their ttr runs out and the recoverer redelivers them.
        this.release(topic, performance.now() - KEEP_MS).catch((error: unknown) =>
          this.parts?.logger.warn({ err: error, topic }, 'redis: returning kept tasks failed; they are delivered again after their ttr'),
        );
        this.armRelease(topic);
      },
      Math.max(0, oldest + KEEP_MS - performance.now()),
    );
    timer.unref();
    this.releaseTimers.set(topic, timer);
  }

  /** Kept tasks no consumer took (kept at or before `cutoff`): back to the head of the lists, the attempt not counted. */
  private async release(topic: string, cutoff: number): Promise<void> {
    const records = this.kept.takeKeptBy(topic, cutoff);
    if (this.kept.size(topic) === 0) {
      const timer = this.releaseTimers.get(topic);
      if (timer !== undefined) clearTimeout(timer);
      this.releaseTimers.delete(topic);
    }
    if (records.length === 0) return;
    const now = this.parts?.now() ?? 0;
    const owner = this.parts?.keeper.owner ?? '';
    await Promise.all(
      [...groupByShard(records, (r) => r.id, this.shardCount)].map(([shard, group]) =>
        releaseScript(
          this.client,
          this.shard(shard),
          topic,
          now,
          this.keys.readyChannel(topic),
          `${shard} ${owner}`,
          group.flatMap((r) => (r.receipt === null ? [] : [{ id: r.id, receipt: r.receipt }])),
        ).then(() => this.waiters.notify(topic, shard)),
      ),
    );
  }

  // ---------------------------------------------------------------------------------
  // Called by the keeper and the subscriber

  /**
   * A shard taken over: its timers within the horizon go to this process's wheel. Retried
   * until it succeeds (or the shard is lost again): a shard owned but not loaded would
   * hold its tasks until a later owner loads it.
   */
  async loadShard(shard: number): Promise<void> {
    for (;;) {
      if (this.isClosed || !this.parts?.keeper.owns(shard)) return;
      try {
        await this.loadShardOnce(shard);
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
  }

  private async loadShardOnce(shard: number): Promise<void> {
    const until = (this.parts?.now() ?? 0) + this.horizonMs;
    await this.unparkFor(shard, until);
    let after: { dueAt: number; seq: number } | null = null;
    for (;;) {
      const page = await loadDueScript(this.client, this.shard(shard), until, after, 1_000);
      for (const entry of page) this.emit({ ...entry });
      const last = page[page.length - 1];
      if (!last || page.length < 1_000) return;
      after = { dueAt: last.dueAt, seq: last.seq };
    }
  }

  /** The recoverer: reservations overdue in owned shards (their consumer process died). */
  async recoverOverdue(owned: readonly number[]): Promise<void> {
    if (this.isClosed || this.listeners.length === 0) return;
    const until = (this.parts?.now() ?? 0) - RECOVER_GRACE_MS;
    for (const shard of owned) {
      const overdue = await loadDueScript(this.client, this.shard(shard), until, null, 500, 'ttr');
      for (const entry of overdue) this.emit({ ...entry });
    }
  }

  /** A message on the timers channel: "id topic dueAt seq kind receipt" lines. */
  receiveTimers(message: string): void {
    const keeper = this.parts?.keeper;
    if (!keeper) return;
    for (const line of message.split('\n')) {
      const [id, topic, dueAt, seq] = line.split(' ');
      if (id === undefined || topic === undefined || !keeper.owns(shardOf(id, this.shardCount))) continue;
      this.emit({ id, topic, kind: 'run', dueAt: Number(dueAt), seq: Number(seq), receipt: null });
    }
  }

  private emit(ref: TimerRef): void {
    for (const listener of this.listeners) listener(ref);
  }

  /** Near-window timers of shards other processes own go to their owners at once. */
  private publishTimers(refs: readonly TimerRef[], now: number): void {
    const keeper = this.parts?.keeper;
    if (!keeper || refs.length === 0) return;
    const horizon = now + this.horizonMs;
    const lines = refs
      .filter((r) => r.dueAt < horizon && !keeper.owns(shardOf(r.id, this.shardCount)))
      .map((r) => `${r.id} ${r.topic} ${r.dueAt} ${r.seq}`);
    if (lines.length === 0) return;
    // Fire and forget: a lost message only makes the owner find the timer at its next load.
    this.client.publish(this.keys.timerChannel, lines.join('\n')).catch(() => undefined);
  }
}
