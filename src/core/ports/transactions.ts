/**
 * The store port's transactional role: tasks created, cancelled and settled inside a
 * transaction of the caller's own, on the database the store keeps its tasks in
 * (PostgreSQL). The change exists if and only if that transaction commits, so an application
 * writes its own rows and their delayed tasks atomically (an order and its close-if-unpaid
 * task; the payment and the cancel of that task; the work a handler did and the ack that
 * says it is done).
 */
import type { NewTaskRecord } from '../task/model.js';
import type { NackOutcome, NackRequest, ScheduleOutcome, StoreAckOutcome, StoreCancelOutcome } from './tasks.js';

/**
 * A connection holding an open transaction of the caller's: anything with
 * `query(text, values)` answering `{ rows }` (a node-postgres Client or PoolClient after
 * BEGIN). The store runs its statements on it and never commits, rolls back or releases it.
 */
export interface SqlTransaction {
  query(text: string, values?: unknown[]): Promise<{ readonly rows: readonly unknown[] }>;
}

/** An ack inside the caller's transaction (TransactionalTasks.ack). */
export interface TransactionalAck {
  readonly id: string;
  readonly receipt: string;
  readonly now: number;
}

export interface TransactionalTasks {
  /**
   * `schedule`, inside `tx`: the outcomes are as the transaction sees them (created or not),
   * and hold once it commits. The tasks' timers reach the process that owns them by a notice
   * the database sends on commit, so the caller's engine places no timer itself; a rolled
   * back transaction leaves no task and no timer.
   */
  schedule(tx: SqlTransaction, tasks: readonly NewTaskRecord[], now: number): Promise<ScheduleOutcome[]>;
  /** `cancel`, inside `tx`: the task is cancelled if the transaction commits, and stays as it was if it rolls back. */
  cancel(tx: SqlTransaction, id: string, now: number): Promise<StoreCancelOutcome>;
  /**
   * `ack`, inside `tx`: the outcome as the transaction sees it. Committed, the task is
   * completed; rolled back, the reservation is as it was (it runs out at its time and the
   * task is delivered again, as the next attempt). The row stays locked until then, so no
   * expiry or renewal slips in between.
   */
  ack(tx: SqlTransaction, request: TransactionalAck): Promise<StoreAckOutcome>;
  /** `nack`, inside `tx`, likewise; a retry's timer reaches the owner of the task's shard on commit, as a transactional schedule's does. */
  nack(tx: SqlTransaction, request: NackRequest): Promise<NackOutcome>;
}
