/**
 * The hot writes, each one statement over arrays (`unnest`), so a batch of 1,000 costs one
 * round trip and one commit: schedule, reserve, ack, cancel and purge (sql/<name>.sql). Each
 * statement moves its tasks and their counters together (sql/includes/counted.sql), and answers per input item in
 * input order (WITH ORDINALITY). PostgreSQL re-checks an UPDATE's WHERE on a row that a
 * concurrent transaction changed before taking it, so each task is checked and changed
 * atomically, as the port requires. A task the statement did not change is read back by a
 * subquery per such item (an index probe), never by a join with tasks, which the planner
 * makes a hash of the whole table: a cost growing with every task held, paid by every batch.
 *
 * Concurrent single calls reach these through the batchers of postgres-store.ts (group
 * commit: what callers submit while a statement is in flight goes out in the next one).
 */
import { DelayQError } from '../../core/errors.js';
import type { AckRequest, ExtendOutcome, ExtendRequest, ScheduleOutcome, StoreAckOutcome, StoreCancelOutcome, TopicPurgeState, TopicPurgeStep } from '../../core/ports/index.js';
import { laneOf, type NewTaskRecord, type ReservedTask } from '../../core/task/model.js';
import { nextNonce } from '../shared/nonce.js';
import { shardOf } from '../../coordination/router.js';
import type { PgContext } from './context.js';
import { numberArray, textArray, uniform } from './array-literal.js';
import { STORED_DEFAULTS, storedOrNull } from './rows.js';

/** The largest batch one statement carries. */
export const MAX_BATCH = 2_000;

/**
 * Where a statement runs other than the store's pool: a caller's transaction
 * (transactional.ts), with the counter slot its writes use.
 */
export interface Via {
  run<R>(text: string, values: unknown[]): Promise<R[]>;
  readonly slot: number;
}

/** Where a statement of `items` input rows runs: the pool (`planned`), or the caller's transaction as it is (its settings are the caller's). */
function runner(pg: PgContext, via: Via | undefined): <R extends object>(text: string, values: unknown[], items: number) => Promise<R[]> {
  return via === undefined ? (text, values, items) => pg.planned(items, text, values) : (text, values) => via.run(text, values);
}

/**
 * After a schedule statement met an id that exists, this many more go out with ON CONFLICT
 * from the start: ids are being sent again (retries, idempotency keys), and each attempt
 * that fails costs a round trip and leaves its rows dead until vacuum.
 */
const GUARDED_AFTER_CONFLICT = 100;
/** Per store: schedule statements left to send with ON CONFLICT from the start. */
const guarded = new WeakMap<PgContext, number>();

/**
 * Inserts new tasks optimistically (ADR 0042): a plain INSERT costs PostgreSQL about a third
 * less than one with ON CONFLICT DO NOTHING (speculative insertion: a check of the primary
 * key before each row, a confirmation record after it). All rows or none: if one id exists,
 * the statement fails with unique_violation having changed nothing, and the batch goes again
 * with ON CONFLICT, which answers per id. Inside a transaction (`via`: the caller's, or a
 * large call's) a failed statement would abort it, so there ON CONFLICT goes first.
 */
async function insertTasks(pg: PgContext, via: Via | undefined, values: unknown[]): Promise<ScheduleRow[]> {
  const careful = pg.sql('schedule');
  if (via !== undefined) return via.run<ScheduleRow>(careful, values);
  const left = guarded.get(pg) ?? 0;
  if (left > 0) {
    guarded.set(pg, left - 1);
    return pg.query<ScheduleRow>(careful, values);
  }
  try {
    return await pg.query<ScheduleRow>(pg.sql('schedule-new'), values);
  } catch (error) {
    if (!(error instanceof DelayQError) || error.details?.['code'] !== UNIQUE_VIOLATION) throw error;
    guarded.set(pg, GUARDED_AFTER_CONFLICT);
    return pg.query<ScheduleRow>(careful, values);
  }
}

/** SQLSTATE of a duplicate key: tasks has one unique index, its primary key (the id). */
const UNIQUE_VIOLATION = '23505';

interface ScheduleRow {
  id: string;
  seq: number | null;
  existing_run_at: number | null;
}

/** `now`: one time for every task, or each task's own (coalesced calls keep theirs). */
export async function scheduleTasks(pg: PgContext, tasks: readonly NewTaskRecord[], now: number | readonly number[], via?: Via): Promise<ScheduleOutcome[]> {
  // Ids repeated in one call: the first wins, the others answer as an existing task would.
  const first = new Map<string, number>();
  const unique: NewTaskRecord[] = [];
  const nows: number[] = [];
  for (const [i, task] of tasks.entries())
    if (!first.has(task.id)) {
      first.set(task.id, i);
      unique.push(task);
      nows.push(typeof now === 'number' ? now : now[i]!);
    }
  // The parameters of sql/includes/schedule-input.sql. A column goes as one value when the
  // batch agrees on it (array-literal.ts); url may be NULL, so it goes whole, or as no
  // element at all when no task has one. A policy value that is the stored default goes as
  // NULL, which the row keeps (migration 0009).
  const urls = unique.map((t) => t.url ?? null);
  const traces = unique.map((t) => t.trace ?? null);
  const policy = (of: (t: NewTaskRecord) => number, usual: number): string => numberArray(uniform(unique.map((t) => storedOrNull(of(t), usual))));
  const values = [
    textArray(unique.map((t) => t.id)),
    textArray(uniform(unique.map((t) => t.topic))),
    numberArray(unique.map((t) => t.runAt)),
    policy((t) => t.maxAttempts, STORED_DEFAULTS.max_attempts),
    policy((t) => t.ttrMs, STORED_DEFAULTS.ttr_ms),
    policy((t) => t.backoff.baseMs, STORED_DEFAULTS.backoff_base_ms),
    policy((t) => t.backoff.factor, STORED_DEFAULTS.backoff_factor),
    policy((t) => t.backoff.maxMs, STORED_DEFAULTS.backoff_max_ms),
    policy((t) => t.backoff.jitter, STORED_DEFAULTS.backoff_jitter),
    urls.every((u) => u === null) ? '{}' : textArray(urls),
    textArray(unique.map((t) => t.payload)),
    numberArray(uniform(nows)),
    via?.slot ?? pg.slotOf('other'),
    numberArray(unique.map((t) => shardOf(t.id, pg.shards))),
    traces.every((t) => t === null) ? '{}' : textArray(traces),
    unique.every((t) => t.priority === undefined) ? '{}' : numberArray(unique.map((t) => t.priority ?? 0)),
  ];
  const rows = new Map((await insertTasks(pg, via, values)).map((row) => [row.id, row]));
  const byId = new Map<string, ScheduleOutcome>();
  unique.forEach((task) => {
    const row = rows.get(task.id)!;
    byId.set(
      task.id,
      row.seq !== null
        ? { id: task.id, runAt: task.runAt, created: true, ref: { id: task.id, topic: laneOf(task.topic, task.url), kind: 'run', dueAt: task.runAt, seq: row.seq, receipt: null } }
        : // existing_run_at is null only when another transaction created the id after this statement's snapshot.
          { id: task.id, runAt: row.existing_run_at ?? task.runAt, created: false, ref: null },
    );
  });
  return tasks.map((task, i) => {
    const outcome = byId.get(task.id)!;
    return first.get(task.id) === i || !outcome.created ? outcome : { id: task.id, runAt: outcome.runAt, created: false, ref: null };
  });
}

/** A task as a reservation statement returns it. */
export interface ReserveRow {
  id: string;
  topic: string;
  payload: string;
  run_at: number;
  attempts: number;
  max_attempts: number;
  receipt: string;
  reserved_until: number;
  url: string | null;
  trace: string | null;
}

/** pending and due -> reserved, in input order; a receipt is `<attempts>.<nonce><seq>`, so no two reservations share one. */
export async function reserveTasks(pg: PgContext, ids: readonly string[], now: number, ttrMs: number | undefined): Promise<ReservedTask[]> {
  const unique = [...new Set(ids)];
  const rows = await pg.planned<ReserveRow>(unique.length, pg.sql('reserve'), [textArray(unique), now, nextNonce(), ttrMs ?? null, pg.slotOf('reserve')]);
  return rows.map(reservedOf);
}

/** A reserved row as the port's ReservedTask: url and trace only when the task has them. */
export function reservedOf(r: ReserveRow): ReservedTask {
  if (r.trace !== null) return { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until, url: r.url, trace: r.trace };
  return r.url === null
    ? { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until }
    : { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until, url: r.url };
}

/**
 * reserved -> completed with the current receipt, the attempt's entry appended to its history
 * (outcome 'acked') in the same UPDATE; the receipt moves to acked_receipt, so the
 * same ack sent again answers `already_acked` until the task is purged (and an id twice
 * with one receipt in one call: `acked`, then `already_acked`, so it is counted once).
 */
export async function ackTasks(pg: PgContext, acks: readonly AckRequest[], now: number | readonly number[], via?: Via): Promise<StoreAckOutcome[]> {
  const rows = await runner(pg, via)<{ outcome: 'acked' | 'already_acked' | 'not_found' | 'stale'; topic: string | null }>(
    pg.sql('ack'),
    [textArray(acks.map((a) => a.id)), textArray(acks.map((a) => a.receipt)), numberArray(typeof now === 'number' ? [now] : uniform(now)), via?.slot ?? pg.slotOf('ack')],
    acks.length,
  );
  const acked = new Set<string>();
  return rows.map((r, i): StoreAckOutcome => {
    if (r.outcome !== 'acked' || r.topic === null) return { status: r.outcome === 'acked' ? 'already_acked' : r.outcome };
    const key = `${acks[i]!.id}\u0000${acks[i]!.receipt}`;
    if (acked.has(key)) return { status: 'already_acked' };
    acked.add(key);
    return { status: 'acked', topic: r.topic };
  });
}

/**
 * Extends reservations in force (core/task/decide.ts decideExtend, as one UPDATE over the
 * arrays): reserved with the receipt given and not run out by `now`; reserved_until and
 * due_at (its ttr timer) move to now + ttr (the request's, or the task's ttr_ms). Another
 * read per request that changed nothing tells stale from not_found.
 */
export async function extendTasks(pg: PgContext, requests: readonly ExtendRequest[], now: number): Promise<ExtendOutcome[]> {
  const rows = await pg.planned<{ reserved_until: number | null; found: boolean | null }>(
    requests.length,
    pg.sql('extend'),
    [textArray(requests.map((r) => r.id)), textArray(requests.map((r) => r.receipt)), numberArray(requests.map((r) => r.ttrMs ?? null)), now],
  );
  return rows.map((r): ExtendOutcome => (r.reserved_until !== null ? { status: 'extended', reservedUntil: Number(r.reserved_until) } : { status: r.found === true ? 'stale' : 'not_found' }));
}

/** pending -> cancelled; an id given twice is cancelled by its first occurrence, the second is `not_pending`. */
/** `now`: one time for every id, or each id's own (coalesced calls keep theirs). */
export async function cancelTasks(pg: PgContext, ids: readonly string[], now: number | readonly number[], via?: Via): Promise<StoreCancelOutcome[]> {
  const rows = await runner(pg, via)<{ topic: string | null; found: boolean }>(
    pg.sql('cancel'),
    [textArray(ids), numberArray(typeof now === 'number' ? [now] : uniform(now)), via?.slot ?? pg.slotOf('other')],
    ids.length,
  );
  const seen = new Set<string>();
  return rows.map((r, i): StoreCancelOutcome => {
    const id = ids[i]!;
    const again = seen.has(id);
    seen.add(id);
    if (r.topic !== null && !again) return { status: 'cancelled', topic: r.topic };
    return { status: r.found ? 'not_pending' : 'not_found' };
  });
}

/** Deletes up to `limit` finished tasks last changed before `before`; rows another transaction holds are left for next time. */
export async function purgeTasks(pg: PgContext, before: number, limit: number): Promise<number> {
  const rows = await pg.query<{ n: number }>(pg.sql('purge'), [before, limit, pg.slotOf('other')]);
  return rows[0]?.n ?? 0;
}

/** Rows a purgeTopic step reads per row it may delete: bounded, whatever the store holds. */
const PURGE_LOOKS_PER_LIMIT = 4;

/**
 * One step of a topic purge: the next ids after `cursor` (in id order, at most
 * PURGE_LOOKS_PER_LIMIT * limit of them) are looked at, and those of `topic` in `state`
 * (completed includes cancelled) are deleted, at most `limit`, with their counters.
 */
export async function purgeTopicStep(pg: PgContext, topic: string, state: TopicPurgeState, cursor: string | null, limit: number): Promise<TopicPurgeStep> {
  const window = PURGE_LOOKS_PER_LIMIT * limit;
  const rows = await pg.query<{ id: string | null; topic: string | null; state: string | null; run_at: number | null; seq: number | null; url: string | null; last: string | null; scanned: number }>(
    pg.sql('purge-topic'),
    [cursor ?? '', window, topic, state, limit, pg.slotOf('other')],
  );
  const deleted = rows.filter((r) => r.id !== null);
  const ids = deleted.map((r) => r.id!);
  const runs = deleted.filter((r) => r.state === 'pending').map((r) => ({ id: r.id!, topic: laneOf(r.topic!, r.url), kind: 'run' as const, dueAt: r.run_at!, seq: r.seq!, receipt: null }));
  const first = rows[0];
  const next = ids.length >= limit ? ids.at(-1)! : first === undefined || first.scanned < window ? null : first.last;
  return { ids, runs, next };
}
