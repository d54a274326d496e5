/**
 * The hot writes, each one statement over arrays (`unnest`), so a batch of 1,000 costs one
 * round trip and one commit: schedule, reserve, ack, cancel and purge. Each statement
 * moves its tasks and their counters together (countersCte), and answers per input item in
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
import type { AckRequest, ScheduleOutcome, StoreAckOutcome, StoreCancelOutcome, TopicPurgeState, TopicPurgeStep } from '../../core/ports/index.js';
import { laneOf, type NewTaskRecord, type ReservedTask } from '../../core/task/model.js';
import { nextNonce } from '../shared/nonce.js';
import { shardOf } from '../shared/router.js';
import type { PgContext } from './context.js';
import { numberArray, textArray, uniform } from './array-literal.js';
import { countersCte } from './counters.js';
import { STORED_DEFAULTS } from './migrations/0009_default_nulls.js';
import { historyAppend, orUsual, reservation, storedOrNull } from './rows.js';

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

function runner(pg: PgContext, via: Via | undefined): <R extends object>(text: string, values: unknown[], name: string) => Promise<R[]> {
  return via === undefined ? (text, values, name) => pg.query(text, values, name) : (text, values) => via.run(text, values);
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
async function insertTasks(pg: PgContext, via: Via | undefined, statement: (arbiter: string) => string, values: unknown[]): Promise<ScheduleRow[]> {
  const careful = statement('ON CONFLICT (id) DO NOTHING');
  if (via !== undefined) return via.run<ScheduleRow>(careful, values);
  const left = guarded.get(pg) ?? 0;
  if (left > 0) {
    guarded.set(pg, left - 1);
    return pg.query<ScheduleRow>(careful, values, 'delayq_schedule');
  }
  try {
    return await pg.query<ScheduleRow>(statement(''), values, 'delayq_schedule_new');
  } catch (error) {
    if (!(error instanceof DelayQError) || error.details?.['code'] !== UNIQUE_VIOLATION) throw error;
    guarded.set(pg, GUARDED_AFTER_CONFLICT);
    return pg.query<ScheduleRow>(careful, values, 'delayq_schedule');
  }
}

/**
 * A column of the schedule's input that `uniform` may have sent as one value: that value for
 * every task when the array has one element, else the task's own. Not coalesce, as for the
 * columns never NULL: a policy column's NULL is a value here (the stored default).
 */
function oneOrEach(column: string, param: string): string {
  return `CASE WHEN cardinality(${param}) = 1 THEN (${param})[1] ELSE ${column} END`;
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
  const s = pg.schema;
  const statement = (arbiter: string): string =>
    `WITH input AS (
       SELECT id, coalesce(topic, ($2::text[])[1]) AS topic, run_at,
              ${oneOrEach('max_attempts', '$4::int[]')} AS max_attempts, ${oneOrEach('ttr_ms', '$5::bigint[]')} AS ttr_ms,
              ${oneOrEach('base_ms', '$6::bigint[]')} AS base_ms, ${oneOrEach('factor', '$7::float8[]')} AS factor,
              ${oneOrEach('max_ms', '$8::bigint[]')} AS max_ms, ${oneOrEach('jitter', '$9::float8[]')} AS jitter,
              url, payload, coalesce(now, ($12::bigint[])[1]) AS now, shard, ord
         FROM unnest($1::text[], $2::text[], $3::bigint[], $4::int[], $5::bigint[], $6::bigint[], $7::float8[], $8::bigint[], $9::float8[], $10::text[], $11::text[], $12::bigint[], $14::smallint[])
         WITH ORDINALITY AS i(id, topic, run_at, max_attempts, ttr_ms, base_ms, factor, max_ms, jitter, url, payload, now, shard, ord)
     ),
     ins AS (
       INSERT INTO "${s}".tasks (id, topic, state, run_at, due_at, max_attempts, ttr_ms, backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, created_at, url, payload, shard)
       SELECT id, topic, 'pending', run_at, run_at, max_attempts, ttr_ms, base_ms, factor, max_ms, jitter, now, url, payload, shard FROM input ORDER BY ord
       ${arbiter}
       RETURNING id, seq, topic
     ),
     ${countersCte(s, "SELECT topic, NULL::text AS from_state, 'pending'::text AS to_state FROM ins", '$13')}
     ${
       arbiter === ''
         ? // Every row went in (or the statement failed): no need to match them with the input.
           'SELECT id, seq, NULL::bigint AS existing_run_at FROM ins'
         : `SELECT i.id, ins.seq, CASE WHEN ins.id IS NULL THEN (SELECT t.run_at FROM "${s}".tasks t WHERE t.id = i.id) END AS existing_run_at
              FROM input i LEFT JOIN ins ON ins.id = i.id`
     }`;
  // A column goes as one value when the batch agrees on it (array-literal.ts); url may be
  // NULL, so it goes whole, or as no element at all when no task has one. A policy value
  // that is the stored default goes as NULL, which the row keeps (migration 0009).
  const urls = unique.map((t) => t.url ?? null);
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
  ];
  const rows = new Map((await insertTasks(pg, via, statement, values)).map((row) => [row.id, row]));
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
}

/** pending and due -> reserved, in input order; a receipt is `<attempts>.<nonce><seq>`, so no two reservations share one. */
export async function reserveTasks(pg: PgContext, ids: readonly string[], now: number, ttrMs: number | undefined): Promise<ReservedTask[]> {
  const unique = [...new Set(ids)];
  const s = pg.schema;
  const rows = await pg.query<ReserveRow>(
    `WITH input AS (SELECT * FROM unnest($1::text[]) WITH ORDINALITY AS i(id, ord)),
     upd AS (
       UPDATE "${s}".tasks t SET ${reservation('t.', '$2', '$3', '$4')}
         FROM input i WHERE t.id = i.id AND t.state = 'pending' AND t.run_at <= $2
       RETURNING t.id, t.topic, t.payload, t.run_at, t.attempts, ${orUsual('t.', 'max_attempts')} AS max_attempts, t.receipt, t.reserved_until, t.url
     ),
     ${countersCte(s, "SELECT topic, 'pending'::text AS from_state, 'reserved'::text AS to_state FROM upd", '$5')}
     SELECT upd.* FROM upd JOIN input i ON i.id = upd.id ORDER BY i.ord`,
    [textArray(unique), now, nextNonce(), ttrMs ?? null, pg.slotOf('reserve')],
    'delayq_reserve',
  );
  return rows.map((r) =>
    r.url === null
      ? { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until }
      : { id: r.id, topic: r.topic, payload: r.payload, runAt: r.run_at, attempts: r.attempts, maxAttempts: r.max_attempts, receipt: r.receipt, reservedUntil: r.reserved_until, url: r.url },
  );
}

/**
 * reserved -> completed with the current receipt, the attempt's entry appended to its history
 * (outcome 'acked') in the same UPDATE; the receipt moves to acked_receipt, so the
 * same ack sent again answers `already_acked` until the task is purged (and an id twice
 * with one receipt in one call: `acked`, then `already_acked`, so it is counted once).
 */
export async function ackTasks(pg: PgContext, acks: readonly AckRequest[], now: number | readonly number[]): Promise<StoreAckOutcome[]> {
  const s = pg.schema;
  const rows = await pg.query<{ outcome: 'acked' | 'already_acked' | 'not_found' | 'stale'; topic: string | null }>(
    `WITH input AS (
       SELECT id, receipt, coalesce(now, ($3::bigint[])[1]) AS now, ord FROM unnest($1::text[], $2::text[], $3::bigint[]) WITH ORDINALITY AS a(id, receipt, now, ord)
     ),
     upd AS (
       UPDATE "${s}".tasks t SET ${historyAppend('t.', 'a.now', "'acked'::text", 'NULL::text')},
              state = 'completed', due_at = NULL, acked_receipt = t.receipt, receipt = NULL, reserved_until = NULL, updated_at = a.now
         FROM input a WHERE t.id = a.id AND t.state = 'reserved' AND t.receipt = a.receipt
       RETURNING t.id, t.topic, t.acked_receipt
     ),
     ${countersCte(s, "SELECT topic, 'reserved'::text AS from_state, 'completed'::text AS to_state FROM upd", '$4')}
     SELECT CASE WHEN u.id IS NOT NULL THEN 'acked'
                 ELSE coalesce((SELECT CASE WHEN t.state = 'completed' AND t.acked_receipt = a.receipt THEN 'already_acked' ELSE 'stale' END
                                  FROM "${s}".tasks t WHERE t.id = a.id), 'not_found') END AS outcome, u.topic
       FROM input a LEFT JOIN upd u ON u.id = a.id AND u.acked_receipt = a.receipt
      ORDER BY a.ord`,
    [textArray(acks.map((a) => a.id)), textArray(acks.map((a) => a.receipt)), numberArray(typeof now === 'number' ? [now] : uniform(now)), pg.slotOf('ack')],
    'delayq_ack',
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

/** pending -> cancelled; an id given twice is cancelled by its first occurrence, the second is `not_pending`. */
/** `now`: one time for every id, or each id's own (coalesced calls keep theirs). */
export async function cancelTasks(pg: PgContext, ids: readonly string[], now: number | readonly number[], via?: Via): Promise<StoreCancelOutcome[]> {
  const s = pg.schema;
  const rows = await runner(pg, via)<{ topic: string | null; found: boolean }>(
    `WITH input AS (SELECT id, coalesce(now, ($2::bigint[])[1]) AS now, ord FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS i(id, now, ord)),
     upd AS (
       UPDATE "${s}".tasks t SET state = 'cancelled', due_at = NULL, updated_at = i.now
         FROM input i WHERE t.id = i.id AND t.state = 'pending'
       RETURNING t.id, t.topic
     ),
     ${countersCte(s, "SELECT topic, 'pending'::text AS from_state, 'cancelled'::text AS to_state FROM upd", '$3')}
     SELECT u.topic, CASE WHEN u.id IS NOT NULL THEN true ELSE (SELECT true FROM "${s}".tasks t WHERE t.id = i.id) IS NOT NULL END AS found
       FROM input i LEFT JOIN upd u ON u.id = i.id
      ORDER BY i.ord`,
    [textArray(ids), numberArray(typeof now === 'number' ? [now] : uniform(now)), via?.slot ?? pg.slotOf('other')],
    'delayq_cancel',
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
  const s = pg.schema;
  const rows = await pg.query<{ n: number }>(
    `WITH d AS (
       DELETE FROM "${s}".tasks WHERE id IN (
         SELECT id FROM "${s}".tasks WHERE state IN ('completed', 'cancelled') AND updated_at < $1 LIMIT $2 FOR UPDATE SKIP LOCKED
       ) RETURNING topic, state
     ),
     ${countersCte(s, 'SELECT topic, state AS from_state, NULL::text AS to_state FROM d', '$3')}
     SELECT count(*)::int AS n FROM d`,
    [before, limit, pg.slotOf('other')],
  );
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
  const s = pg.schema;
  const window = PURGE_LOOKS_PER_LIMIT * limit;
  const rows = await pg.query<{ id: string | null; topic: string | null; state: string | null; run_at: number | null; seq: number | null; url: string | null; last: string | null; scanned: number }>(
    `WITH scan AS (SELECT id FROM "${s}".tasks WHERE id > $1 ORDER BY id LIMIT $2),
     cand AS (
       SELECT t.id FROM "${s}".tasks t JOIN scan USING (id)
        WHERE t.topic = $3 AND (t.state = $4 OR ($4 = 'completed' AND t.state = 'cancelled'))
        ORDER BY t.id LIMIT $5 FOR UPDATE
     ),
     d AS (DELETE FROM "${s}".tasks WHERE id IN (SELECT id FROM cand) RETURNING id, topic, state, run_at, seq, url),
     ${countersCte(s, 'SELECT topic, state AS from_state, NULL::text AS to_state FROM d', '$6')}
     SELECT d.id, d.topic, d.state, d.run_at, d.seq, d.url, (SELECT max(id) FROM scan) AS last, (SELECT count(*)::int FROM scan) AS scanned
       FROM (SELECT 1) one LEFT JOIN d ON true ORDER BY d.id`,
    [cursor ?? '', window, topic, state, limit, pg.slotOf('other')],
  );
  const deleted = rows.filter((r) => r.id !== null);
  const ids = deleted.map((r) => r.id!);
  const runs = deleted.filter((r) => r.state === 'pending').map((r) => ({ id: r.id!, topic: laneOf(r.topic!, r.url), kind: 'run' as const, dueAt: r.run_at!, seq: r.seq!, receipt: null }));
  const first = rows[0];
  const next = ids.length >= limit ? ids.at(-1)! : first === undefined || first.scanned < window ? null : first.last;
  return { ids, runs, next };
}
