/**
 * The facade's reads (get, list, stats, dueHistogram): each call checked
 * (core/task/validate.ts), answered from the store, with what the engine holds in memory
 * for stats (the LoopRunner's wheel, backlog, long-polls, lateness and push counters).
 */
import { cutPage, pageMayContinue, TASK_PAGE_SIZE } from '../../core/task/list-page.js';
import type { TaskInfo, TaskRecord } from '../../core/task/model.js';
import { decodeTaskInfo, undecodableInfo } from '../../core/task/undecodable.js';
import { validateDueHistogramOptions, validateId, validateListFilter, type Limits } from '../../core/task/validate.js';
import type { LoopContext } from '../loop-context.js';
import type { DueHistogramOptions, DueHistogramResult, ListOptions, QueueStats, TaskPage } from '../queue-types.js';
import type { LoopRunner } from '../loop-runner.js';

export interface InspectionParams {
  readonly runner: Pick<LoopRunner, 'stats' | 'quarantine'>;
  readonly limits: Limits;
}

export class Inspection {
  constructor(
    private readonly context: Pick<LoopContext, 'store' | 'clock'>,
    private readonly params: InspectionParams,
  ) {}

  async get<P>(id: string): Promise<TaskInfo<P> | null> {
    validateId(id, this.params.limits);
    const record = await this.context.store.tasks.get(id);
    return record === null ? null : (await this.shown<P>([record]))[0]!;
  }

  async list<P>(options: ListOptions): Promise<TaskInfo<P>[]> {
    return this.shown<P>(await this.context.store.tasks.list(validateListFilter(options, this.params.limits)));
  }

  /** The records as tasks; one that cannot be read is quarantined and shown as such (core/task/undecodable.ts). */
  private async shown<P>(records: readonly TaskRecord[]): Promise<TaskInfo<P>[]> {
    const tasks = new Array<TaskInfo<P>>(records.length);
    for (let i = 0; i < records.length; i++) {
      const record = records[i]!;
      const decoded = decodeTaskInfo<P>(record);
      if (decoded.problem === null) tasks[i] = decoded.value;
      else {
        await this.params.runner.quarantine.read(record, decoded.problem);
        tasks[i] = undecodableInfo<P>(record, decoded.problem, this.context.clock.now());
      }
    }
    return tasks;
  }

  /**
   * One page of the listing, bounded in bytes as well as in count (core/task/list-page.ts):
   * it ends after the task that takes it past TASK_PAGE_SIZE, and `next` (the last id) says
   * where the next page starts, null once the listing ended.
   */
  async listPage<P>(options: ListOptions): Promise<TaskPage<P>> {
    const filter = { ...validateListFilter(options, this.params.limits), maxSize: TASK_PAGE_SIZE };
    // Cut again here: a store written elsewhere may not honour maxSize.
    const records = cutPage(await this.context.store.tasks.list(filter), filter.limit, filter.maxSize);
    const next = pageMayContinue(records, filter.limit, filter.maxSize) ? records.at(-1)!.id : null;
    return { tasks: await this.shown<P>(records), next };
  }

  async stats(): Promise<QueueStats> {
    const { store } = this.context;
    const stats = await store.tasks.stats();
    return { store: store.description, counts: stats.byState, topics: stats.byTopic, unavailable: stats.unavailable ?? [], ...this.params.runner.stats() };
  }

  async dueHistogram(options: DueHistogramOptions): Promise<DueHistogramResult> {
    const query = validateDueHistogramOptions(options, this.context.clock.now(), this.params.limits);
    const { counts, coveredUntil } = await this.context.store.tasks.dueHistogram(query);
    return { from: query.from, to: query.to, bucketMs: query.bucketMs, topic: query.topic ?? null, counts, coveredUntil };
  }
}
