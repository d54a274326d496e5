/**
 * The PostgreSQL store's tasks role (`store.tasks`): every task a row of `<schema>.tasks`,
 * every change one statement or one transaction with `now` passed in (task-writes.ts,
 * task-changes.ts, inspection.ts). The store (postgres-store.ts) holds it with the other
 * roles, and closes.
 *
 * Group commit: single calls of the hot kinds (schedule, reserve, ack, cancel) made while a
 * statement of their kind is in flight wait and go out together in the next one
 * (src/coordination/batcher.ts), so a thousand producers each scheduling one task cost a few
 * statements and commits, not a thousand, and no timer adds delay to a lone call.
 */
import type { AckRequest, StoreAckOutcome, TopicPurgeRequest, TopicPurgeStep, CancelDeadOutcome, DeferOutcome, DeferRequest, DueCursor, DueHistogram, DueHistogramQuery, ExpireOutcome, ExtendOutcome, ExtendRequest, ListFilter, NackOutcome, QuarantineRequest, RescheduleOutcome, RetryDeadOutcome, ScheduleOutcome, StoreCancelOutcome, StoreStats, TaskRoles, FlowLease, NackRequest } from '../../core/ports/index.js';
import { reserveRefsByIds } from '../../core/batch-fallbacks.js';
import type { NewTaskRecord, ReservedTask, TaskRecord, TimerRef } from '../../core/task/model.js';
import { ShardBatcher } from '../../coordination/batcher.js';
import type { PgContext } from './context.js';
import { dueHistogram, getTask, listTasks, loadDue, taskStats } from './inspection.js';
import type { OpenCalls } from './open-calls.js';
import type { PgShared } from './shared.js';
import { cancelDeadTask, deferTask, nackTask, quarantineTasks, rescheduleTask, retryDeadTask, settleFailure } from './task-changes.js';
import { ackTasks, cancelTasks, extendTasks, MAX_BATCH, purgeTasks, purgeTopicStep, reserveTasks, scheduleTasks } from './task-writes.js';

/** Rows one purge statement deletes at most, so the janitor never holds many row locks long. */
const PURGE_BATCH = 1_000;
/** Statements of one kind in flight at once; what arrives meanwhile waits for the next. */
const IN_FLIGHT = 2;

export class PostgresTasks implements TaskRoles {
  private readonly scheduleBatcher: ShardBatcher<Timed<NewTaskRecord>, ScheduleOutcome>;
  private readonly acks: ShardBatcher<Timed<AckRequest>, StoreAckOutcome>;
  private readonly cancels: ShardBatcher<Timed<string>, StoreCancelOutcome>;

  /** `coordination`: the store's shared part (the shards this process owns, the timers channel); `calls`: the store's open state. */
  constructor(
    private readonly pg: PgContext,
    private readonly coordination: PgShared,
    private readonly calls: OpenCalls,
  ) {
    // One batcher per kind; each item keeps the `now` of its own call.
    this.scheduleBatcher = new ShardBatcher((_, items) => scheduleTasks(this.pg, items.map((i) => i.item), items.map((i) => i.now)), MAX_BATCH, IN_FLIGHT);
    this.acks = new ShardBatcher((_, items) => ackTasks(this.pg, items.map((i) => i.item), items.map((i) => i.now)), MAX_BATCH, IN_FLIGHT);
    this.cancels = new ShardBatcher((_, items) => cancelTasks(this.pg, items.map((i) => i.item), items.map((i) => i.now)), MAX_BATCH, IN_FLIGHT);
  }

  private guard<T>(run: () => Promise<T>): Promise<T> {
    return this.calls.guard(run);
  }

  // ---------------------------------------------------------------------------------
  // Producers

  schedule(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    if (tasks.length === 0) return this.guard(async () => []);
    const write = (): Promise<ScheduleOutcome[]> =>
      tasks.length === 1 ? this.scheduleBatcher.submit(0, [{ item: tasks[0]!, now }]) : tasks.length <= MAX_BATCH ? scheduleTasks(this.pg, tasks, now) : this.scheduleLarge(tasks, now);
    return this.guard(() => this.told(write(), now, (outcomes) => outcomes.map((o) => o.ref)));
  }

  /** More than one statement carries: its statements in one transaction, so the call still commits whole or not at all. */
  private scheduleLarge(tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    return this.pg.transaction(async (client) => {
      const via = { run: async <R>(text: string, values: unknown[]): Promise<R[]> => (await client.query(text, values)).rows as R[], slot: this.pg.slotOf('other') };
      return chunked(tasks, MAX_BATCH, (chunk) => scheduleTasks(this.pg, chunk, now, via));
    });
  }

  cancel(id: string, now: number): Promise<StoreCancelOutcome> {
    return this.guard(async () => (await this.cancels.submit(0, [{ item: id, now }]))[0]!);
  }

  cancelMany(ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
    if (ids.length === 0) return this.guard(async () => []);
    return this.guard(() => chunked(ids, MAX_BATCH, (chunk) => cancelTasks(this.pg, chunk, now)));
  }

  reschedule(id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
    return this.guard(() => this.told(rescheduleTask(this.pg, id, runAt, now), now, refOf));
  }

  // ---------------------------------------------------------------------------------
  // The scheduler's feed

  loadDue(until: number, after: DueCursor | null, limit: number): Promise<TimerRef[]> {
    // Only the shards this process owns: the others' timers are their owners'.
    return this.guard(() => loadDue(this.pg, until, after, limit, this.coordination.owned()));
  }

  // ---------------------------------------------------------------------------------
  // Consumers

  reserve(ids: readonly string[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    if (ids.length === 0) return this.guard(async () => []);
    return this.guard(() => chunked(ids, MAX_BATCH, (chunk) => reserveTasks(this.pg, chunk, now, ttrMs)));
  }

  /** A ref spares this store nothing: the row is read by id either way. */
  reserveRefs(refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
    return reserveRefsByIds(this, refs, now, ttrMs);
  }

  ack(id: string, receipt: string, now: number): Promise<StoreAckOutcome> {
    return this.guard(async () => (await this.acks.submit(0, [{ item: { id, receipt }, now }]))[0]!);
  }

  ackMany(acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
    if (acks.length === 0) return this.guard(async () => []);
    return this.guard(() => this.acks.submit(0, acks.map((item) => ({ item, now }))));
  }

  nack({ id, receipt, now, ...options }: NackRequest): Promise<NackOutcome> {
    return this.guard(() => this.told(nackTask(this.pg, id, receipt, now, options), now, refOf));
  }

  /** The reservations of a topic in force: TopicLimitStore.reservedLeases, through the store's topics role. */
  reservedLeases(topic: string, now: number, until: number): Promise<FlowLease[]> {
    return this.guard(async () =>
      (await this.pg.query<{ receipt: string; reserved_until: string }>(this.pg.sql('reserved-leases'), [topic, now, until])).map((row) => ({ key: row.receipt, until: Number(row.reserved_until) })),
    );
  }

  extend(requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
    if (requests.length === 0) return this.guard(async () => []);
    return this.guard(() => chunked(requests, MAX_BATCH, (chunk) => extendTasks(this.pg, chunk, now)));
  }

  expire(id: string, receipt: string, now: number): Promise<ExpireOutcome> {
    // A held reservation's ttr timer goes back to the expirer that asked, not to the shard's owner.
    return this.guard(() => this.told(settleFailure(this.pg, id, receipt, now, { kind: 'expire' }), now, (o) => (o.status === 'held' ? [] : refOf(o))));
  }

  defer({ id, receipt, runAt, now }: DeferRequest): Promise<DeferOutcome> {
    return this.guard(() => this.told(deferTask(this.pg, id, receipt, runAt, now), now, refOf));
  }

  // ---------------------------------------------------------------------------------
  // Operators

  get(id: string): Promise<TaskRecord | null> {
    return this.guard(() => getTask(this.pg, id));
  }

  list(filter: ListFilter): Promise<TaskRecord[]> {
    return this.guard(() => listTasks(this.pg, filter));
  }

  stats(): Promise<StoreStats> {
    return this.guard(() => taskStats(this.pg));
  }

  dueHistogram(query: DueHistogramQuery): Promise<DueHistogram> {
    return this.guard(() => dueHistogram(this.pg, query));
  }

  quarantine(tasks: readonly QuarantineRequest[], now: number): Promise<void> {
    return this.guard(() => quarantineTasks(this.pg, tasks, now));
  }

  cancelDead(id: string, now: number): Promise<CancelDeadOutcome> {
    return this.guard(() => cancelDeadTask(this.pg, id, now));
  }

  retryDead(id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
    return this.guard(() => this.told(retryDeadTask(this.pg, id, runAt, now), now, refOf));
  }

  purge(before: number, limit: number): Promise<number> {
    return this.guard(async () => {
      let deleted = 0;
      while (deleted < limit) {
        const batch = Math.min(PURGE_BATCH, limit - deleted);
        const n = await purgeTasks(this.pg, before, batch);
        deleted += n;
        if (n < batch) break;
      }
      return deleted;
    });
  }

  purgeTopic({ topic, state, cursor, limit }: TopicPurgeRequest): Promise<TopicPurgeStep> {
    return this.guard(() => purgeTopicStep(this.pg, topic, state, cursor, limit));
  }

  // ---------------------------------------------------------------------------------

  /** Once `write` committed, the near-window timers it made in shards other processes own go to their owners. */
  private async told<T>(write: Promise<T>, now: number, refs: (outcome: T) => readonly (TimerRef | null)[]): Promise<T> {
    const outcome = await write;
    this.coordination.remoteTimers.publish(refs(outcome), now);
    return outcome;
  }
}

/** The timer a write's outcome carries, if any. */
function refOf(outcome: { readonly status: string; readonly ref?: TimerRef }): (TimerRef | null)[] {
  return [outcome.ref ?? null];
}

/** An item of a coalesced call, with the call's own time. */
interface Timed<T> {
  readonly item: T;
  readonly now: number;
}

/** A batch call in chunks of `size`, one statement each, in order; outcomes in input order. */
async function chunked<I, O>(items: readonly I[], size: number, run: (chunk: I[]) => Promise<O[]>): Promise<O[]> {
  if (items.length <= size) return run(items as I[]);
  const out: O[] = [];
  for (let from = 0; from < items.length; from += size) out.push(...(await run(items.slice(from, from + size))));
  return out;
}
