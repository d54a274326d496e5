/**
 * The per-(topic, state) counters `stats` reports, kept in `task_counts` by the statements
 * that change tasks, in their own transaction (src/core/task/counter-deltas.ts is the model).
 *
 * Two ways, one model:
 * - A write decided in TypeScript (nack, expire, defer, retryDead, cancelDead, purge of a
 *   transaction) sums its deltas in a CounterTally and adds them with `addCounts` before
 *   COMMIT.
 * - A hot batch statement (schedule, reserve, ack, cancel, purge) moves tasks and counters in
 *   one statement: its changed rows, as (topic, from_state, to_state), go through
 *   `countersCte`, which spells the model's rule in SQL: -1 on (topic, from) and +1 on
 *   (topic, to) when they differ, none for a side that is NULL (created, purged).
 *   test/stores/counters-property.test.ts holds both ways to the model.
 *
 * Rows are split by `slot`, so that writers do not queue on one row lock: each process
 * picks a base at random when the store opens (one of COUNTER_SLOTS) and writes slot
 * base * 3 + 0 (schedules, cancels, the rest), + 1 (reservations) or + 2 (acks), since its
 * reservations and acks run at once and both move (topic, 'reserved'). Writes inside a
 * caller's transaction use TX_SLOTS_FROM onwards (transactional.ts, migration 0003), apart
 * from every engine's. `stats` sums the slots. Upserts lock counter rows in (topic, state)
 * order, so two statements can never wait for each other in a cycle on them.
 */
import type { CounterTally } from '../../core/task/counter-deltas.js';
import type { Queryable } from './connection.js';

/** Counter slot bases: a process picks one at random; more bases, fewer processes sharing a row. */
export const COUNTER_SLOTS = 64;
/** Slots per base: one per kind of write (SlotKind). */
export const SLOT_KINDS = 3;
export type SlotKind = 'other' | 'reserve' | 'ack';
/** The first slot of writes inside callers' transactions (COUNTER_SLOTS of them, at random). */
export const TX_SLOTS_FROM = 256;

/**
 * A data-modifying CTE named `counted` adding the deltas of `changes`: a query yielding
 * (topic, from_state, to_state) rows. `slot` is the parameter holding this process's slot.
 */
export function countersCte(schema: string, changes: string, slot: string): string {
  return `counted AS (
    INSERT INTO "${schema}".task_counts AS c (slot, topic, state, n)
    SELECT ${slot}::smallint, topic, state, sum(n)::bigint FROM (
      SELECT topic, from_state AS state, -1 AS n FROM (${changes}) ch WHERE from_state IS NOT NULL AND from_state IS DISTINCT FROM to_state
      UNION ALL
      SELECT topic, to_state, 1 FROM (${changes}) ch WHERE to_state IS NOT NULL AND from_state IS DISTINCT FROM to_state
    ) d GROUP BY topic, state ORDER BY topic, state
    ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + excluded.n
  )`;
}

/** Adds a tally's sums, inside the caller's transaction. */
export async function addCounts(client: Queryable, schema: string, slot: number, tally: CounterTally): Promise<void> {
  const topics: string[] = [];
  const states: string[] = [];
  const ns: number[] = [];
  for (const { topic, state, n } of tally.entries()) {
    topics.push(topic);
    states.push(state);
    ns.push(n);
  }
  if (topics.length === 0) return;
  await client.query(
    `INSERT INTO "${schema}".task_counts AS c (slot, topic, state, n)
     SELECT $1::smallint, topic, state, n FROM unnest($2::text[], $3::text[], $4::bigint[]) AS d(topic, state, n) ORDER BY topic, state
     ON CONFLICT (slot, topic, state) DO UPDATE SET n = c.n + excluded.n`,
    [slot, topics, states, ns],
  );
}

/** What `stats` reads: a handful of rows however many tasks there are. */
export function countsQuery(schema: string): string {
  return `SELECT topic, state, sum(n)::bigint AS n FROM "${schema}".task_counts GROUP BY topic, state HAVING sum(n) <> 0`;
}
