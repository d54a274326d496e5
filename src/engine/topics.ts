/**
 * Operations on a whole topic (DelayQueue.topics): pause, resume, flow limits, purge.
 *
 * Pause and resume write the store's set of paused topics (TopicPauseStore) and apply it
 * in this process at once; other processes sharing the store read it within pauseSyncMs
 * (topic-pauses.ts, ADR 0040). Limits are written and read the same way (topic-flow.ts,
 * ADR 0043).
 *
 * A purge is a pass of bounded store steps (TaskStore.purgeTopic, at most PURGE_STEP tasks
 * each), with a turn of the event loop between them, so deliveries, acks and HTTP requests
 * go on while a large topic is purged: no step holds the store or the loop longer than a
 * few hundred deletes. After each step of a pending purge the scheduler forgets the run
 * timers of the tasks deleted, by id and seq, so a task scheduled meanwhile under a freed id
 * keeps its own.
 *
 *   purge('mail', { state: 'pending' }) on 1,200 pending tasks of mail
 *     step 1: 500 deleted, their timers forgotten; a turn for the rest of the process
 *     step 2: 500 ...; step 3: 200, next = null  ->  1200
 */
import { asDict, own } from '../core/dict.js';
import { validateTopicLimits, type TopicLimits } from '../core/flow/limits.js';
import type { TopicPurgeState, TopicPurgeStep } from '../core/ports/index.js';
import { validatePurgeState, validateTopic, type Limits } from '../core/task/validate.js';
import type { LoopContext } from './loop-context.js';
import type { Scheduler } from './scheduler.js';

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
  readonly scheduler: Pick<Scheduler, 'forgetRuns' | 'pauses' | 'flow'>;
  readonly limits: Limits;
  readonly assertOpen: () => void;
}

export class Topics {
  private readonly context: LoopContext;
  private readonly scheduler: TopicsParams['scheduler'];
  private readonly limits: Limits;
  private readonly assertOpen: () => void;

  constructor(context: LoopContext, { scheduler, limits, assertOpen }: TopicsParams) {
    this.context = context;
    this.scheduler = scheduler;
    this.limits = limits;
    this.assertOpen = assertOpen;
  }

  /**
   * Pauses `topic`: from now on this process delivers nothing of it (no reserve, no push),
   * and every other process sharing the store within pauseSyncMs (1 s by default). Its
   * tasks keep their due times, new ones are taken, recurring occurrences are created; what
   * falls due waits. Answers false if it was paused already. Durable as tasks are.
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
    return this.scheduler.pauses.list();
  }

  /**
   * Sets `topic`'s flow limits (docs/library.md, "Flow control"): `rate` deliveries per
   * `periodMs` (default 1000) in bursts of at most `burst` (default `rate`), and/or at most
   * `concurrency` deliveries in flight. They hold across every process sharing the store,
   * within pauseSyncMs of the change; answers the limits as stored. Durable as tasks are.
   */
  async setLimits(topic: string, limits: TopicLimitsInput): Promise<TopicLimits> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const checked = validateTopicLimits(limits);
    const { store, inFlight } = this.context;
    await inFlight.track(store.setTopicLimits(topic, checked));
    await this.scheduler.flow.refresh();
    return checked;
  }

  /** Removes `topic`'s limits; false if it had none. */
  async clearLimits(topic: string): Promise<boolean> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const changed = await inFlight.track(store.setTopicLimits(topic, null));
    await this.scheduler.flow.refresh();
    return changed;
  }

  /** `topic`'s limits as the store holds them now, or null when it has none. */
  async getLimits(topic: string): Promise<TopicLimits | null> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const read = await inFlight.track(store.topicLimits());
    return own(read.limits, topic) ?? null;
  }

  /** Every limited topic's limits as the store holds them now, in topic order. */
  async listLimits(): Promise<Readonly<Record<string, TopicLimits>>> {
    this.assertOpen();
    const { store, inFlight } = this.context;
    return asDict((await inFlight.track(store.topicLimits())).limits);
  }

  private async setPaused(topic: string, paused: boolean): Promise<boolean> {
    this.assertOpen();
    validateTopic(topic, this.limits);
    const { store, inFlight } = this.context;
    const changed = await inFlight.track(store.setTopicPaused(topic, paused));
    await this.scheduler.pauses.refresh();
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
    do {
      const step: TopicPurgeStep = await inFlight.track(store.purgeTopic(topic, state, cursor, PURGE_STEP));
      purged += step.ids.length;
      this.scheduler.forgetRuns(step.runs);
      cursor = step.next;
      if (cursor !== null) {
        // A turn of the event loop between steps: whatever waits runs first.
        await new Promise<void>((resolve) => setImmediate(resolve));
        this.assertOpen();
      }
    } while (cursor !== null);
    return purged;
  }
}
