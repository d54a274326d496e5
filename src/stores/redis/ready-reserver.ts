/**
 * Consumers reserving from the shared ready lists (SharedDispatch.reserveReady): a call
 * first hands out what this process keeps for its topic (kept-releaser.ts), else runs
 * reserve-ready.lua on the shards that may hold ready ids (ready-waiters.ts; which shards
 * and how many each: reserve-plan.ts), else waits for a wakeup. A call with the default
 * ttr reserves up to PREFETCH and keeps the surplus for the next call of its topic.
 *
 * While a consumer is served from what is kept and its topic's lists hold a backlog, one
 * background reserve per topic (drainBacklog) brings some of that backlog into the kept
 * tasks, ahead of them: promotions keep refilling the kept tasks while a burst lasts, and
 * the tasks pushed to the lists would otherwise wait for the burst to pass.
 */
import type { Logger } from '../../core/ports/index.js';
import type { TaskRecord } from '../../core/task/model.js';
import { decodeTask } from './codec.js';
import { reserveReadyScript } from './dispatch-commands.js';
import type { RankedShards } from './ranked-shards.js';
import type { ConsumerDemand } from '../../coordination/consumer-demand.js';
import type { RedisClient } from './connection.js';
import type { KeptTaskReleaser } from './kept-releaser.js';
import type { Keyspace, ShardKeys } from './keys.js';
import { nextNonce } from '../shared/nonce.js';
import type { ReadyWaiters } from '../../coordination/ready-waiters.js';
import { planReserveSteps, type ReserveStep } from '../../coordination/reserve-plan.js';
import type { Subscriber } from './subscriber.js';
import type { ShardHealth } from '../../coordination/shard-health.js';
import { DelayQError, isDelayQError } from '../../core/errors.js';

/** Scores of the ranked ready sets below it are of priorities above 0 (includes/patch.lua RANKED_ABOVE_ZERO). */
const RANKED_ABOVE_ZERO = 100 * 1e13;

/** The most tasks one call reserves (reserve-ready.lua pops at most 4x this per call). */
const MAX_RESERVE = 1_000;
/** A call with the default ttr reserves up to this many and keeps the surplus: a worker whose slots free up one by one needs no round trip per task (ADR 0007). */
const PREFETCH = 64;
/** Ids asked of one shard unless it is known to hold fewer: a few shards for larger batches, fewer script calls per task (ADR 0007). */
const RESERVE_SHARE = 32;
/** A background reserve asks for up to this many of a topic's backlog, up to DRAIN_SHARE from each flagged shard: a few calls of many ids each. */
const DRAIN_FETCH = 512;
const DRAIN_SHARE = 128;

export class ReadyReserver {
  /** Where the next call starts among the flagged shards (rotates so every shard is drained). */
  private rotor = 0;
  /** Per topic: the background reserve in flight (drainBacklog), awaited by stop(). */
  private readonly drains = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly subscriber: Subscriber,
    private readonly waiters: ReadyWaiters,
    private readonly demand: ConsumerDemand,
    private readonly kept: KeptTaskReleaser,
    private readonly health: ShardHealth,
    private readonly logger: Logger,
    private readonly ranked: RankedShards,
  ) {}

  /** Flagged shards worth a reserve call: those that take writes (a degraded one waits for its recovery, shard-health.ts). */
  private candidates(topic: string): number[] {
    return this.waiters.candidates(topic).filter((shard) => this.health.available(shard));
  }

  async reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal, exact = false): Promise<TaskRecord[]> {
    await this.subscriber.watch(topic);
    // A call that does not wait never reaches the sweep in waiters.wait: it sweeps here.
    this.waiters.sweepIfDue(topic);
    if (this.ranked.needsProbe(topic)) await this.probeRanked(topic);
    const want = Math.min(max, MAX_RESERVE);
    // Exact (a limited topic): no prefetch and no promotion reserving for this call, whose
    // surplus would be kept here while other processes' admitted consumers find nothing.
    if (ttrMs !== undefined || exact) return this.reserveLoop(topic, want, now, ttrMs, signal, exact);
    // Promotions may reserve for this call directly (promoter.ts) for as long as it asks:
    // while it waits, while its reserve calls are in flight, and LINGER_MS after.
    const asking = this.demand.start(topic, want);
    try {
      return await this.reserveLoop(topic, want, now, ttrMs, signal);
    } finally {
      this.demand.stop(topic, asking);
    }
  }

  /**
   * Reads once which shards hold ready tasks of `topic` above priority 0 (one ZCOUNT a
   * shard, sent together): what was made ready before this process listened to the topic
   * (a paused topic resumed, a consumer started late). A failed read leaves it to the
   * reserve replies.
   */
  private async probeRanked(topic: string): Promise<void> {
    const read = (shard: ShardKeys, low: string, high: string): Promise<number> => this.client.zcount(shard.readyRanked(topic), low, high);
    const counts = await Promise.allSettled(
      this.keys.shards.map((shard) => Promise.all([read(shard, '-inf', `(${RANKED_ABOVE_ZERO}`), read(shard, `${RANKED_ABOVE_ZERO}`, '+inf')])),
    );
    counts.forEach((count, shard) => {
      if (count.status !== 'fulfilled') return;
      const [above, below] = count.value;
      if (above > 0) {
        this.ranked.set(topic, shard, true);
        this.waiters.notify(topic, shard);
      }
      if (below > 0) this.ranked.setBelow(topic, shard, true);
    });
  }

  /** Waiting calls return [] at once and no new background reserve starts; resolves once those in flight are done. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.waiters.close();
    // What a background reserve brings goes to the kept tasks, which are given back after this.
    await Promise.all(this.drains.values());
  }

  private async reserveLoop(topic: string, want: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal, exact = false): Promise<TaskRecord[]> {
    // Prefetch only for the default ttr: the surplus is kept for the next caller of the topic.
    const fetch = ttrMs === undefined && !exact ? Math.max(want, Math.min(PREFETCH, MAX_RESERVE)) : want;
    const nonce = nextNonce();
    let attempt = 0;
    for (;;) {
      if (this.stopped) return [];
      // Shards known to hold tasks above priority 0 are asked first, each for what the call
      // wants, with what is kept here taken back: all of it is sorted and the highest go
      // out (ADR 0057). A topic without priorities never has such shards.
      const rankedShards = this.ranked.count(topic, this.candidates(topic));
      if (rankedShards > 0) {
        // What the call does not hand out is kept for the next caller only for the default
        // ttr: a call with its own ttr (or exact) asks one shard for what it wants.
        const keeps = ttrMs === undefined && !exact;
        const shards = this.ranked.first(topic, this.candidates(topic)).slice(0, keeps ? rankedShards : 1);
        const steps = shards.map((shard) => ({ shard, count: keeps ? fetch : want }));
        const { reserved } = await this.reserveSteps(topic, steps, now(), ttrMs, () => `${nonce}${(attempt++).toString(36)}.`);
        if (ttrMs === undefined && this.kept.size(topic) > 0) reserved.push(...this.kept.handOut(topic, this.kept.size(topic)));
        if (reserved.length > 0) {
          reserved.sort(byPriority);
          if (reserved.length > want) this.kept.keep(topic, reserved.splice(want));
          return reserved;
        }
        continue;
      }
      if (ttrMs === undefined && this.kept.size(topic) > 0) {
        if (!exact) this.drainBacklog(topic, now);
        return this.kept.handOut(topic, want);
      }
      // A store none of whose shards takes writes answers as a store that is down.
      const down = this.health.unavailable();
      if (down.length === this.keys.shards.length) throw new DelayQError('STORE_UNAVAILABLE', `redis: no shard takes writes now (${down[0]!.error})`);
      // Several shards that may hold ready ids are asked at once (reserve-plan.ts), starting
      // at a rotating shard so none is left behind.
      const flagged = this.candidates(topic);
      const start = flagged.length === 0 ? 0 : this.rotor++ % flagged.length;
      const steps = planReserveSteps(flagged, start, fetch, RESERVE_SHARE, (shard) => this.waiters.backlog(topic, shard));
      const { reserved, retryAt } = await this.reserveSteps(topic, steps, now(), ttrMs, () => `${nonce}${(attempt++).toString(36)}.`);
      if (reserved.length > want) this.kept.keep(topic, reserved.splice(want));
      if (reserved.length > 0) return reserved;
      if (signal.aborted) return [];
      if (this.candidates(topic).length > 0 && retryAt === 0) continue;
      // No shard has tasks of priority 0 or above: those below 0 go now (ADR 0057).
      const below = this.ranked.below(topic).filter((shard) => this.health.available(shard));
      const drain = this.drains.get(topic);
      if (below.length > 0 && (drain !== undefined || (ttrMs === undefined && this.kept.size(topic) > 0))) {
        // A background reserve may be bringing tasks of priority 0 or above, or has brought
        // them to the kept ones: they go first.
        await drain;
        continue;
      }
      if (below.length > 0) {
        const keeps = ttrMs === undefined && !exact;
        const steps = below.slice(0, keeps ? below.length : 1).map((shard) => ({ shard, count: want }));
        const taken = await this.reserveSteps(topic, steps, now(), ttrMs, () => `${nonce}${(attempt++).toString(36)}.`, false);
        if (taken.reserved.length > 0) {
          taken.reserved.sort(byPriority);
          if (taken.reserved.length > want) this.kept.keep(topic, taken.reserved.splice(want));
          return taken.reserved;
        }
        continue;
      }
      await this.waiters.wait(topic, signal, retryAt > 0 ? Math.max(1, retryAt - now()) : undefined);
    }
  }

  /**
   * Runs the planned reserve calls of `topic` at once and records what each shard has left;
   * the reserved records, and the earliest time a shard said to come back (0: none did).
   */
  private async reserveSteps(
    topic: string,
    steps: readonly ReserveStep[],
    at: number,
    ttrMs: number | undefined,
    nonceOf: () => string,
    /** Whether the shards leave their tasks below priority 0 (as long as any shard may have others). */
    holdBelowZero = true,
  ): Promise<{ reserved: TaskRecord[]; retryAt: number }> {
    const epoch = this.waiters.epoch(topic);
    // Each shard on its own: one that cannot be written is marked (and then skipped until it
    // recovers), and the tasks the others reserved are handed out all the same.
    const settled = await Promise.allSettled(
      steps.map((step) => this.health.track(step.shard, () => reserveReadyScript(this.client, this.keys.shards[step.shard]!, topic, at, step.count, ttrMs, nonceOf(), holdBelowZero))),
    );
    let retryAt = 0;
    const reserved: TaskRecord[] = [];
    const failed = settled.flatMap((s) => (s.status === 'rejected' ? [s.reason as unknown] : []));
    // Nothing answered, or something other than an unavailable shard went wrong: the caller's error.
    const unexpected = failed.find((error) => !isDelayQError(error, 'STORE_UNAVAILABLE'));
    if (unexpected !== undefined || (failed.length > 0 && failed.length === settled.length)) throw unexpected ?? failed[0];
    settled.forEach((result, i) => {
      if (result.status === 'rejected') return;
      const reply = result.value;
      this.waiters.update(topic, steps[i]!.shard, reply.retryAt > 0 ? Math.max(1, reply.remaining) : reply.remaining, epoch);
      this.ranked.set(topic, steps[i]!.shard, reply.rankedLeft > 0);
      this.ranked.setBelow(topic, steps[i]!.shard, reply.belowLeft > 0);
      if (reply.retryAt > 0) retryAt = retryAt === 0 ? reply.retryAt : Math.min(retryAt, reply.retryAt);
      for (const [id, body] of reply.reserved) reserved.push(decodeTask(id, body).record);
    });
    // Each shard answers highest priority first; across shards too (ADR 0057), and by runAt
    // within one priority. Only a call that reserved tasks of another priority than 0 sorts.
    if (reserved.some((r) => (r.priority ?? 0) !== 0)) reserved.sort(byPriority);
    return { reserved, retryAt };
  }

  /**
   * Tasks promote pushed to the shared lists (local consumers asked for fewer than fell
   * due, or for none) were reserved only once the kept tasks ran out, and while a burst
   * lasts promotions keep refilling those (ADR 0009). So a consumer served
   * from the kept tasks while its topic's lists hold a backlog starts one reserve in the
   * background that brings some of it in, ahead of what is kept. One per topic at a time; a
   * failure leaves the tasks in the lists for the next call.
   */
  private drainBacklog(topic: string, now: () => number): void {
    if (this.drains.has(topic) || this.stopped) return;
    // Only to top up the kept tasks to what the consumers ask for, once half empty: more
    // would go back after KEEP_MS and be reserved again (each task ~4 times with a slow
    // consumer of one slot).
    const demand = this.demand.of(topic);
    const room = demand - this.kept.size(topic) - this.demand.promised(topic);
    if (room < demand / 2) return;
    const flagged = this.candidates(topic);
    if (flagged.length === 0) return;
    const steps = planReserveSteps(flagged, this.rotor++ % flagged.length, Math.min(DRAIN_FETCH, room), DRAIN_SHARE, (shard) =>
      this.waiters.backlog(topic, shard),
    );
    const nonce = nextNonce();
    let step = 0;
    const drain = this.reserveSteps(topic, steps, now(), undefined, () => `${nonce}${(step++).toString(36)}.`)
      .then(({ reserved }) => {
        if (reserved.length === 0) return;
        // Ahead of the kept ones: they fell due before promote began to push; of a topic
        // with priorities, not ahead of kept ones of a higher priority (ADR 0057).
        if (this.ranked.everRanked(topic) || reserved.some((r) => (r.priority ?? 0) !== 0)) this.kept.keepByPriority(topic, reserved);
        else this.kept.keepFirst(topic, reserved);
        this.waiters.wake(topic);
      })
      .catch((error: unknown) => this.logger.warn({ err: error, topic }, 'redis: a background reserve failed; its tasks stay in the ready lists'))
      .finally(() => this.drains.delete(topic));
    this.drains.set(topic, drain);
  }
}

/** Highest priority first, then runAt. */
function byPriority(a: TaskRecord, b: TaskRecord): number {
  return (b.priority ?? 0) - (a.priority ?? 0) || a.runAt - b.runAt;
}

