/**
 * The writes off the hot path, each one transaction: read the task's control columns
 * (`FOR UPDATE`, so no concurrent change slips between the read and the write), decide with
 * core/task/decide.ts, write the change and its counter deltas (a CounterTally), COMMIT.
 * reschedule, nack, expire, defer, retryDead, cancelDead and quarantine; a nack may instead run inside
 * the caller's transaction (`via`, transactional.ts), which commits it or not.
 */
import type { CancelDeadOutcome, DeferOutcome, ExpireOutcome, NackOutcome, QuarantineRequest, RescheduleOutcome, RetryDeadOutcome, StoreNackOptions } from '../../core/ports/index.js';
import { mayQuarantine } from '../../core/task/undecodable.js';
import { MAX_ERROR_LENGTH, storableText } from '../../core/text.js';
import { CounterTally } from '../../core/task/counter-deltas.js';
import { decideFailure, deferrableOr, failureOutcome, movableOr, nackOutcomeOf, type FailureCause } from '../../core/task/decide.js';
import { historyError } from '../../core/task/history.js';
import { nextState, type TaskEvent } from '../../core/task/lifecycle.js';
import { laneOf, type TaskState } from '../../core/task/model.js';
import type { PoolClient } from './connection.js';
import type { PgContext } from './context.js';
import { addCounts } from './counters.js';
import { backoffOf, runRef, ttrRef, type ControlRow } from './rows.js';
import type { StatementName } from './sql-files.js';
import type { Via } from './task-writes.js';

type Change<T> = (row: ControlRow | undefined, write: Writer) => Promise<T>;

/** The write half of a change: an UPDATE of the row read (a statement whose last parameter is the id), and the transition it makes. */
interface Writer {
  update(statement: StatementName, values: unknown[], from: TaskState, event: TaskEvent): Promise<void>;
}

/** Runs a change in a transaction of its own, or in the caller's (`via`: no BEGIN or COMMIT here, its counter slot). */
async function change<T>(pg: PgContext, id: string, body: Change<T>, via?: Via): Promise<T> {
  if (via !== undefined) return changeOn(pg, id, body, (text, values) => via.run(text, values), via.slot);
  return pg.transaction((client: PoolClient) => changeOn(pg, id, body, async <R>(text: string, values: unknown[]) => (await client.query(text, values)).rows as R[], pg.slotOf('other')));
}

async function changeOn<T>(pg: PgContext, id: string, body: Change<T>, run: Via['run'], slot: number): Promise<T> {
  const rows = await run<ControlRow>(pg.sql('task-for-update'), [id]);
  const tally = new CounterTally();
  const value = await body(rows[0], {
    update: async (statement, values, from, event) => {
      await run(pg.sql(statement), [...values, id]);
      const to = nextState(from, event);
      // Callers decide first (decide.ts): a refused transition here is a bug of the store.
      if (to === undefined) throw new Error(`postgres store: ${event} is not a transition from ${from}`);
      tally.add(rows[0]!.topic, from, to);
    },
  });
  await addCounts(run, pg.sql('add-counts'), slot, tally);
  return value;
}

export function rescheduleTask(pg: PgContext, id: string, runAt: number, now: number): Promise<RescheduleOutcome> {
  return change(pg, id, async (found, write): Promise<RescheduleOutcome> => {
    const row = movableOr(found, 'reschedule', 'not_pending');
    if (typeof row === 'string') return { status: row };
    await write.update('reschedule', [runAt, now], row.state, 'reschedule');
    return { status: 'rescheduled', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
  });
}

/** A failed attempt (nack, expiry), as core/task/decide.ts decides it. */
export function settleFailure(pg: PgContext, id: string, receipt: string, now: number, cause: FailureCause, via?: Via): Promise<ExpireOutcome> {
  return change(pg, id, async (row, write): Promise<ExpireOutcome> => {
    const facts = row && { state: row.state, attempts: row.attempts, maxAttempts: row.max_attempts, backoff: backoffOf(row), reservedUntil: row.reserved_until };
    const decision = decideFailure(facts, row?.receipt === receipt, now, cause);
    if (decision.status === 'not_found' || decision.status === 'stale' || row === undefined) return { status: decision.status === 'stale' ? 'stale' : 'not_found' };
    if (decision.status === 'held') return { status: 'held', ref: ttrRef(id, row, decision.reservedUntil) };
    // The attempt's entry goes to the history in the UPDATE that settles it (ADR 0041).
    const outcome = failureOutcome(cause);
    const entryError = historyError(decision.error);
    if (decision.status === 'dead') {
      await write.update('bury', [decision.error, now, outcome, entryError], row.state, 'bury');
      return { status: 'dead', topic: row.topic };
    }
    await write.update('retry', [decision.runAt, decision.error, now, outcome, entryError], row.state, 'retry');
    return { status: 'retrying', ref: runRef(id, laneOf(row.topic, row.url), decision.runAt, row.seq), topic: row.topic };
  }, via);
}

export function nackTask(pg: PgContext, id: string, receipt: string, now: number, options: StoreNackOptions, via?: Via): Promise<NackOutcome> {
  return settleFailure(pg, id, receipt, now, { kind: 'nack', ...options }, via).then(nackOutcomeOf);
}

export function deferTask(pg: PgContext, id: string, receipt: string, runAt: number, now: number): Promise<DeferOutcome> {
  return change(pg, id, async (found, write): Promise<DeferOutcome> => {
    const row = deferrableOr(found, found?.receipt === receipt);
    if (typeof row === 'string') return { status: row };
    await write.update('defer', [Math.max(0, row.attempts - 1), runAt, now], row.state, 'defer');
    return { status: 'deferred', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
  });
}

export function retryDeadTask(pg: PgContext, id: string, runAt: number, now: number): Promise<RetryDeadOutcome> {
  return change(pg, id, async (found, write): Promise<RetryDeadOutcome> => {
    const row = movableOr(found, 'retryDead', 'not_dead');
    if (typeof row === 'string') return { status: row };
    await write.update('retry-dead', [runAt, now], row.state, 'retryDead');
    return { status: 'retried', ref: runRef(id, laneOf(row.topic, row.url), runAt, row.seq) };
  });
}

/** A row the engine cannot read, out of delivery (TaskStore.quarantine): one transaction per task. */
export async function quarantineTasks(pg: PgContext, tasks: readonly QuarantineRequest[], now: number): Promise<void> {
  for (const { id, receipt, error } of tasks)
    await change(pg, id, async (row, write): Promise<void> => {
      if (row === undefined || !mayQuarantine(row.state, receipt, row.receipt === receipt)) return;
      await write.update('quarantine', [storableText(error, MAX_ERROR_LENGTH), now], row.state, 'quarantine');
    });
}

export function cancelDeadTask(pg: PgContext, id: string, now: number): Promise<CancelDeadOutcome> {
  return change(pg, id, async (found, write): Promise<CancelDeadOutcome> => {
    const row = movableOr(found, 'cancelDead', 'not_dead');
    if (typeof row === 'string') return row;
    await write.update('cancel-dead', [now], row.state, 'cancelDead');
    return 'cancelled';
  });
}
