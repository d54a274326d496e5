/**
 * Scheduling, cancelling and settling inside the caller's transaction (TransactionalTasks):
 * the statements of task-writes.ts and task-changes.ts, run on the caller's connection
 * instead of the pool, so they commit or roll back with the caller's own writes. A created task's near-window timer
 * is announced on the timers channel from the same transaction, so PostgreSQL delivers the
 * notice, to the owner of the task's shard, only if and when it commits; this process's
 * engine places no timer for it meanwhile (the owner, maybe this process, does on the notice).
 *
 * Counter rows: a transaction may stay open a while holding the rows it moved, so these
 * writes use slots 256-319 (one at random per call), apart from every engine's (counters.ts).
 */
import { timerLine } from '../../coordination/timer-lines.js';
import { randomInt } from 'node:crypto';
import type { NackOutcome, ScheduleOutcome, SqlTransaction, StoreAckOutcome, StoreCancelOutcome, TransactionalTasks, NackRequest, TransactionalAck } from '../../core/ports/index.js';
import type { NewTaskRecord, TimerRef } from '../../core/task/model.js';
import { packLines, type Channels } from './channels.js';
import { operationError } from './connection.js';
import type { PgContext } from './context.js';
import { COUNTER_SLOTS, TX_SLOTS_FROM } from './counters.js';
import { nackTask } from './task-changes.js';
import { ackTasks, cancelTasks, scheduleTasks, type Via } from './task-writes.js';

export class PgTransactional implements TransactionalTasks {
  constructor(
    private readonly pg: PgContext,
    private readonly channels: Channels,
    private readonly horizonMs: number,
    private readonly assertOpen: () => void,
  ) {}

  private via(tx: SqlTransaction): Via {
    return {
      run: async <R>(text: string, values: unknown[]): Promise<R[]> => {
        try {
          return (await tx.query(text, values)).rows as R[];
        } catch (error) {
          throw operationError(`${this.pg.where}, in the caller's transaction`, error);
        }
      },
      slot: TX_SLOTS_FROM + randomInt(COUNTER_SLOTS),
    };
  }

  async schedule(tx: SqlTransaction, tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]> {
    this.assertOpen();
    if (tasks.length === 0) return [];
    const via = this.via(tx);
    const outcomes = await scheduleTasks(this.pg, tasks, now, via);
    await this.announce(via, outcomes.map((o) => o.ref), now);
    return outcomes;
  }

  /** Near-window timers go to the owners of their shards on the timers channel, from the transaction: delivered on commit only. */
  private async announce(via: Via, refs: readonly (TimerRef | null)[], now: number): Promise<void> {
    const horizon = now + this.horizonMs;
    const lines = refs.flatMap((ref) => (ref !== null && ref.dueAt < horizon ? [timerLine(ref)] : []));
    if (lines.length > 0) await via.run(this.pg.sql('notify'), [this.channels.timers, packLines(lines)]);
  }

  async ack(tx: SqlTransaction, { id, receipt, now }: TransactionalAck): Promise<StoreAckOutcome> {
    this.assertOpen();
    const [outcome] = await ackTasks(this.pg, [{ id, receipt }], now, this.via(tx));
    return outcome!;
  }

  async nack(tx: SqlTransaction, { id, receipt, now, ...options }: NackRequest): Promise<NackOutcome> {
    this.assertOpen();
    const via = this.via(tx);
    const outcome = await nackTask(this.pg, id, receipt, now, options, via);
    if (outcome.status === 'retrying') await this.announce(via, [outcome.ref], now);
    return outcome;
  }

  async cancel(tx: SqlTransaction, id: string, now: number): Promise<StoreCancelOutcome> {
    this.assertOpen();
    const [outcome] = await cancelTasks(this.pg, [id], now, this.via(tx));
    return outcome!;
  }
}
