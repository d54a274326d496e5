/**
 * The facade's reads (get, list, stats, dueHistogram): each call checked
 * (core/task/validate.ts), answered from the store, with what the engine holds in memory
 * for stats (the Scheduler's wheel, backlog, long-polls, lateness and push counters).
 */
import { toTaskInfo, type TaskInfo } from '../core/task/model.js';
import { validateDueHistogramOptions, validateId, validateListFilter, type Limits } from '../core/task/validate.js';
import type { LoopContext } from './loop-context.js';
import type { DueHistogramOptions, DueHistogramResult, ListOptions, QueueStats } from './queue-types.js';
import type { Scheduler } from './scheduler.js';

export interface InspectionParams {
  readonly scheduler: Pick<Scheduler, 'stats'>;
  readonly limits: Limits;
}

export class Inspection {
  constructor(
    private readonly context: Pick<LoopContext, 'store' | 'clock'>,
    private readonly params: InspectionParams,
  ) {}

  async get<P>(id: string): Promise<TaskInfo<P> | null> {
    validateId(id, this.params.limits);
    const record = await this.context.store.get(id);
    return record === null ? null : toTaskInfo<P>(record);
  }

  async list<P>(options: ListOptions): Promise<TaskInfo<P>[]> {
    const records = await this.context.store.list(validateListFilter(options, this.params.limits));
    return records.map((r) => toTaskInfo<P>(r));
  }

  async stats(): Promise<QueueStats> {
    const { store } = this.context;
    const stats = await store.stats();
    return { store: store.description, counts: stats.byState, topics: stats.byTopic, unavailable: stats.unavailable ?? [], ...this.params.scheduler.stats() };
  }

  async dueHistogram(options: DueHistogramOptions): Promise<DueHistogramResult> {
    const query = validateDueHistogramOptions(options, this.context.clock.now(), this.params.limits);
    const { counts, coveredUntil } = await this.context.store.dueHistogram(query);
    return { from: query.from, to: query.to, bucketMs: query.bucketMs, topic: query.topic ?? null, counts, coveredUntil };
  }
}
