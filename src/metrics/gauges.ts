/**
 * The gauges of a queue's metrics, read at scrape time (collect) from what the queue already
 * keeps counted: its `stats()` (the store's per-(topic, state) counters, the wheel's size,
 * the ready backlog, the long-polls waiting) and its recurring schedules by state (the
 * engine's copy of the list). A scrape costs O(topics + schedules), never O(tasks), and
 * reads no schedule from the store. Built over the queue it reads, by the queue's own
 * constructor (QueueMetrics.registerGauges), so there is no moment when they read nothing.
 *
 * A gauge that is reset at each scrape must still say 0 for what exists and holds nothing:
 * every topic the store counts (any state) gets a series for each state, and delayq_ready_tasks
 * delayq_oldest_ready_age_seconds and delayq_topic_paused one for every such topic, so a drained topic reads 0
 * instead of vanishing (Prometheus would keep showing its last value for five minutes, and
 * a rate or an alert over it would see no drop). The flow-limit gauges are the exception:
 * only a limited topic has a series, since 0 would read as "nothing may be delivered" where
 * the truth is "no limit".
 */
import { Gauge, type Registry } from 'prom-client';
import { TASK_STATES } from '../core/task/model.js';

/** What the gauges read at scrape time: the queue's stats. */
export interface StatsSource {
  stats(): Promise<{
    readonly store: string;
    readonly topics: Readonly<Record<string, Readonly<Partial<Record<string, number>>>>>;
    readonly timers: number;
    readonly ready: Readonly<Record<string, number>>;
    /** The runAt of each topic's longest-waiting ready task (topics with none left out). */
    readonly oldestReady: Readonly<Record<string, number>>;
    readonly waiting: number;
    /** The paused topics (q.topics.pause), as this process holds them. */
    readonly paused: readonly string[];
    /** The limited topics' flow limits (q.topics.setLimits), as this process holds them. */
    readonly limits: Readonly<Record<string, { readonly rate: number | null; readonly periodMs: number; readonly concurrency: number | null }>>;
    /** The partitions of a shared store that cannot take writes now. */
    readonly unavailable: readonly unknown[];
  }>;
  /** The queue's clock: the age of the oldest ready task is now - its runAt. */
  readonly clock: { now(): number };
  /** Recurring schedules by state, counted from the engine's copy of the list (no store read). */
  readonly schedules?: { countByState(): Readonly<Record<RecurringStateLabel, number>> };
}

/** The `state` label values of delayq_schedules (recurring schedules). */
export const RECURRING_STATES = ['active', 'paused', 'ended'] as const;
type RecurringStateLabel = (typeof RECURRING_STATES)[number];

type Stats = Awaited<ReturnType<StatsSource['stats']>>;

export class QueueGauges {
  private pending: Promise<Stats> | null = null;

  /** `labels`: the topic label of a topic under the metrics' cap (QueueMetrics.topicLabel). */
  constructor(
    registry: Registry,
    private readonly source: StatsSource,
    labels: { topicLabel(topic: string): string },
  ) {
    const registers = [registry];
    const gauges = { stats: () => this.stats(), topicLabel: (topic: string) => labels.topicLabel(topic) };
    new Gauge({
      name: 'delayq_tasks',
      help: 'Tasks by state and topic (the store counters).',
      labelNames: ['state', 'topic'],
      registers,
      async collect() {
        const stats = await gauges.stats();
        this.reset();
        if (stats === null) return;
        const sums = new Map<string, number>();
        for (const [topic, counts] of Object.entries(stats.topics)) {
          const label = gauges.topicLabel(topic);
          for (const state of TASK_STATES) {
            const key = `${state}\u0000${label}`;
            sums.set(key, (sums.get(key) ?? 0) + (counts[state] ?? 0));
          }
        }
        for (const [key, n] of sums) {
          const [state, topic] = key.split('\u0000') as [string, string];
          this.set({ state, topic }, n);
        }
      },
    });
    new Gauge({
      name: 'delayq_wheel_timers',
      help: 'Timers in the timing wheel (pending tasks within the loaded window, and reservations).',
      registers,
      async collect() {
        const stats = await gauges.stats();
        this.set(stats?.timers ?? 0);
      },
    });
    /**
     * A gauge by topic: `values` gives (topic, value) pairs, folded per label by `fold` (the
     * topics over the label cap share "_other"); with `zeroKnown`, every topic the store
     * counts starts at 0, so a drained topic reads 0 instead of vanishing.
     */
    const topicGauge = (spec: {
      readonly name: string;
      readonly help: string;
      readonly zeroKnown: boolean;
      readonly fold: (a: number, b: number) => number;
      readonly values: (stats: Stats) => Iterable<readonly [string, number]>;
    }): void =>
      void new Gauge({
        name: spec.name,
        help: spec.help,
        labelNames: ['topic'],
        registers,
        async collect() {
          const stats = await gauges.stats();
          this.reset();
          if (stats === null) return;
          const byLabel = new Map<string, number>();
          if (spec.zeroKnown) for (const topic of knownTopics(stats)) byLabel.set(gauges.topicLabel(topic), 0);
          for (const [topic, n] of spec.values(stats)) {
            const label = gauges.topicLabel(topic);
            const before = byLabel.get(label);
            byLabel.set(label, before === undefined ? n : spec.fold(before, n));
          }
          for (const [topic, n] of byLabel) this.set({ topic }, n);
        },
      });
    const sum = (a: number, b: number): number => a + b;
    topicGauge({
      name: 'delayq_ready_tasks',
      help: 'Due tasks waiting for a consumer, by topic.',
      zeroKnown: true,
      fold: sum,
      values: (stats) => Object.entries(stats.ready),
    });
    // Topics over the label cap share a label: it reads 1 if any of them is paused.
    topicGauge({
      name: 'delayq_topic_paused',
      help: 'Whether the topic is paused (1: nothing of it is delivered) or not (0), as this process holds it.',
      zeroKnown: true,
      fold: Math.max,
      values: (stats) => stats.paused.map((topic) => [topic, 1] as const),
    });
    // Only limited topics have a series; over the label cap "_other" holds the sums of the
    // limits of the topics it stands for (what they may deliver together).
    topicGauge({
      name: 'delayq_topic_limit_rate',
      help: "The topic's flow rate limit in deliveries per second (rate * 1000 / periodMs); no series when it has no rate limit.",
      zeroKnown: false,
      fold: sum,
      values: (stats) => Object.entries(stats.limits).flatMap(([topic, limits]) => (limits.rate === null ? [] : [[topic, (limits.rate * 1000) / limits.periodMs] as const])),
    });
    topicGauge({
      name: 'delayq_topic_limit_concurrency',
      help: 'The most deliveries of the topic in flight at once (its flow limits); no series when it has no cap.',
      zeroKnown: false,
      fold: sum,
      values: (stats) => Object.entries(stats.limits).flatMap(([topic, limits]) => (limits.concurrency === null ? [] : [[topic, limits.concurrency] as const])),
    });
    // Under the cap's "_other": the oldest of the topics it holds.
    topicGauge({
      name: 'delayq_oldest_ready_age_seconds',
      help: 'Age of the longest-waiting ready task, by topic: now minus its runAt; 0 when none is ready.',
      zeroKnown: true,
      fold: Math.max,
      values: (stats) => {
        const now = source.clock.now();
        return Object.entries(stats.oldestReady).map(([topic, runAt]) => [topic, Math.max(0, now - runAt) / 1000] as const);
      },
    });
    new Gauge({
      name: 'delayq_shards_unavailable',
      help: 'Partitions (shards) of a shared store that cannot take writes now, as this process found them: their tasks wait, the others are delivered. Always 0 on a store one process owns.',
      registers,
      async collect() {
        const stats = await gauges.stats();
        this.set(stats?.unavailable.length ?? 0);
      },
    });
    new Gauge({
      name: 'delayq_reserve_waiting',
      help: 'Reserve long-polls waiting for a task.',
      registers,
      async collect() {
        const stats = await gauges.stats();
        this.set(stats?.waiting ?? 0);
      },
    });
    const recurringCounts = (): Readonly<Record<RecurringStateLabel, number>> | undefined => source.schedules?.countByState();
    new Gauge({
      name: 'delayq_schedules',
      help: 'Recurring schedules by state: active, paused, or ended (endAt or limit reached).',
      labelNames: ['state'],
      registers,
      collect() {
        const counts = recurringCounts();
        for (const state of RECURRING_STATES) this.set({ state }, counts?.[state] ?? 0);
      },
    });
  }

  /**
   * One stats() read shared by the gauges of a scrape: the registry starts every collect in
   * the same turn, so they all join the read in flight; the next scrape reads afresh.
   */
  private async stats(): Promise<Stats | null> {
    if (this.pending === null) {
      const read = this.source.stats();
      this.pending = read;
      const clear = (): void => {
        if (this.pending === read) this.pending = null;
      };
      read.then(clear, clear);
    }
    try {
      return await this.pending;
    } catch {
      return null;
    }
  }
}

/** The topics the queue knows now: those the store counts (any state) and those with ready tasks. */
function knownTopics(stats: Stats): Set<string> {
  return new Set([...Object.keys(stats.topics), ...Object.keys(stats.ready), ...Object.keys(stats.oldestReady)]);
}
