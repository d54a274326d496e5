/**
 * Operations on a whole topic (DelayQueue.topics): pause, resume, flow limits, purge.
 *
 * Pause and resume write the store's set of paused topics (TopicPauseStore) and apply it
 * in this process at once; other processes sharing the store read it within pauseSyncMs
 * (topic-pauses.ts, ADR 0040). Limits are written and read the same way (flow-control.ts,
 * ADR 0043). On a store several processes share, each of these calls returns only once
 * every other process's view without it has run out (2 x pauseSyncMs, delivery-gate.ts):
 * from then on it holds for every delivery that starts, in every process (ADR 0052). A
 * concurrency set also counts the topic's reservations in force at that moment as in flight
 * (each holds a slot until it is settled or runs out).
 *
 * A purge is a pass of bounded store steps (TaskStore.purgeTopic, at most PURGE_STEP tasks
 * each), with a turn of the event loop between them, so deliveries, acks and HTTP requests
 * go on while a large topic is purged: no step holds the store or the loop longer than a
 * few hundred deletes. After each step of a pending purge the loop runner forgets the run
 * timers of the tasks deleted, by id and seq, so a task scheduled meanwhile under a freed id
 * keeps its own; those already due leave the ready queue (and the ready gauges) by the
 * purge's end at the latest.
 *
 *   purge('mail', { state: 'pending' }) on 1,200 pending tasks of mail
 *     step 1: 500 deleted, their timers forgotten; a turn for the rest of the process
 *     step 2: 500 ...; step 3: 200, next = null  ->  1200
 */
import { asDict, own } from '../../core/dict.js';
import { validateTopicLimits, type TopicLimits } from '../../core/flow/limits.js';
import type { TopicPurgeState, TopicPurgeStep } from '../../core/ports/index.js';
import { validatePurgeState, validateTopic, type Limits } from '../../core/task/validate.js';
import { MAX_PUSH_TIMEOUT_MS } from '../../core/push-input.js';
import { PUSH_RESERVATION_MARGIN_MS } from '../../core/push.js';
import { gateLeaseMs } from './delivery-gate.js';
import type { LoopContext } from '../loop-context.js';
import type { LoopRunner } from '../loop-runner.js';

/** Tasks one store step of a purge deletes at most. */
export const PURGE_STEP = 500;

export interface TopicPurgeOptions {
  /** `pending`, `dead`, or `completed` (completed and cancelled tasks: they are kept together). */
  readonly state: TopicPurgeState;
}

/** Limits as a caller gives them: defaults filled in by setLimits (core/flow/limits.ts). */
export interface TopicLimitsInput {
  readonly rate?: number;
  readonly periodMs?: number;
  readonly burst?: number;
  readonly concurrency?: number;
}

export interface TopicsParams {
  readonly runner: Pick<LoopRunner, 'forgetRuns' | 'pauses' | 'flow'>;
  readonly limits: Limits;
  readonly assertOpen: () => void;
}

export class Topics {
  private readonly context: LoopContext;
  private readonly runner: TopicsParams['runner'];
  private readonly limits: Limits;
  private readonly assertOpen: () => void;

  constructor(context: LoopContext, { runner, limits, assertOpen }: TopicsParams) {
    this.context = context;
    this.runner = runner;
    this.limits = limits;
    this.assertOpen = assertOpen;
  }

  /**
   * Pauses `topic`: once this returns, no process sharing the store starts a delivery of it
   * (no reserve, no push; on a shared store the call takes 2 x pauseSyncMs, delivery-gate.ts).
   * Its tasks keep their due times, new ones are taken, recurring occurrences are created;
   * what falls due waits. Answers false if it was paused already. Durable as tasks are.
   */
  async pause(topic: string): Promise<boolean> {
    return this.setPaused(topic, true);
  }

  /**
   * Resumes `topic`: what fell due while it was paused is delivered, in the order it fell
   * due (docs/library.md, "Pausing a topic"). Answers false if it was not paused.
   */
  async resume(topic: string): Promise<boolean> {
    return this.setPaused(topic, false);
  }

  /** The topics paused, in ascending order (as this process holds them: see pause). */
  paused(): string[] {
    this.assertOpen();
    return this.runner.pauses.list();
  }

  /**
   * Sets `topic`'s flow limits (docs/library.md, "Flow control"): `rate` deliveries per
   * `periodMs` (default 1000) in bursts of at most `burst` (default `rate`), and/or at most
   * `concurrency` deliveries in flight. They hold for every delivery that starts after this
   * returns, in every process sharing the store (which takes 2 x pauseSyncMs on a shared
   * store); a concurrency counts the deliveries in flight when it is set. Answers the limits
   * as stored. Durable as tasks are.
   */
  async setLimits(topic: string, limits: TopicLimitsInput): Promise<TopicLimits> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const checked = validateTopicLimits(limits);
    const { store, inFlight, clock } = this.context;
    await inFlight.track(store.topics.setTopicLimits(topic, checked));
    await this.runner.flow.refresh();
    await this.untilHeldEverywhere();
    if (checked.concurrency !== null) {
      // The deliveries in flight now count against it: each holds a slot until settled or run out.
      const now = clock.now();
      const leases = await inFlight.track(store.topics.reservedLeases(topic, now, now + this.longestReservationMs()));
      await inFlight.track(store.topics.holdFlow(topic, leases, now));
    }
    return checked;
  }

  /** Removes `topic`'s limits; false if it had none. */
  async clearLimits(topic: string): Promise<boolean> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const changed = await inFlight.track(store.topics.setTopicLimits(topic, null));
    await this.runner.flow.refresh();
    await this.untilHeldEverywhere();
    return changed;
  }

  /**
   * On a store other processes share: waits out the lease of every view read before the
   * change (delivery-gate.ts), after which each process delivers by a view that has it.
   */
  private async untilHeldEverywhere(): Promise<void> {
    const { store, clock, tuning } = this.context;
    if (store.coordination === null) return;
    await new Promise<void>((resolve) => clock.setTimer(resolve, gateLeaseMs(tuning.pauseSyncMs)));
  }

  /** How far ahead a reservation in force may end: the longest ttr, or the longest push (its timeout and margin). */
  private longestReservationMs(): number {
    return Math.max(this.limits.maxTtrMs, MAX_PUSH_TIMEOUT_MS + PUSH_RESERVATION_MARGIN_MS);
  }

  /** `topic`'s limits as the store holds them now, or null when it has none. */
  async getLimits(topic: string): Promise<TopicLimits | null> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const read = await inFlight.track(store.topics.topicLimits());
    return own(read.limits, topic) ?? null;
  }

  /** Every limited topic's limits as the store holds them now, in topic order. */
  async listLimits(): Promise<Readonly<Record<string, TopicLimits>>> {
    this.assertOpen();
    const { store, inFlight } = this.context;
    return asDict((await inFlight.track(store.topics.topicLimits())).limits);
  }

  private async setPaused(topic: string, paused: boolean): Promise<boolean> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const changed = await inFlight.track(store.topics.setTopicPaused(topic, paused));
    await this.runner.pauses.refresh();
    await this.untilHeldEverywhere();
    return changed;
  }

  /**
   * Deletes every task of `topic` in `options.state` (reserved tasks are never purged),
   * freeing their ids, and answers how many were deleted. Tasks that enter the state while
   * the purge runs may stay. Purged tasks are not counted as cancelled: they leave the
   * store's counters (stats, the `delayq_tasks` gauges) as if they had never been.
   */
  async purge(topic: string, options: TopicPurgeOptions): Promise<number> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const state = validatePurgeState((options as Partial<TopicPurgeOptions> | undefined)?.state);
    const { store, inFlight } = this.context;
    let purged = 0;
    let cursor: string | null = null;
    try {
      do {
        const step: TopicPurgeStep = await inFlight.track(store.tasks.purgeTopic({ topic, state, cursor, limit: PURGE_STEP }));
        purged += step.ids.length;
        this.runner.forgetRuns(step.runs, false);
        cursor = step.next;
        if (cursor !== null) {
          // A turn of the event loop between steps: whatever waits runs first.
          await new Promise<void>((resolve) => setImmediate(resolve));
          this.assertOpen();
        }
      } while (cursor !== null);
    } finally {
      // Whatever ended the purge, the ready queue drops the due tasks it deleted now.
      this.runner.forgetRuns([], true);
    }
    return purged;
  }
}
