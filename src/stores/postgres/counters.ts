/**
 * The per-(topic, state) counters `stats` reports, kept in `task_counts` by the statements
 * that change tasks, in their own transaction (src/core/task/counter-deltas.ts is the model).
 *
 * Two ways, one model:
 * - A write decided in TypeScript (nack, expire, defer, retryDead, cancelDead, purge of a
 *   transaction) sums its deltas in a CounterTally and adds them with `addCounts` before
 *   COMMIT.
 * - A hot batch statement (schedule, reserve, ack, cancel, purge) moves tasks and counters in
 *   one statement: its changed rows, as (slot, topic, from_state, to_state), go through
 *   sql/includes/counted.sql, which spells the model's rule in SQL: -1 on (topic, from) and
 *   +1 on (topic, to) when they differ, none for a side that is NULL (created, purged).
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

/** Counter slot bases: a process picks one at random; more bases, fewer processes sharing a row. */
export const COUNTER_SLOTS = 64;
/** Slots per base: one per kind of write (SlotKind). */
export const SLOT_KINDS = 3;
export type SlotKind = 'other' | 'reserve' | 'ack';
/** The first slot of writes inside callers' transactions (COUNTER_SLOTS of them, at random). */
export const TX_SLOTS_FROM = 256;

/** Adds a tally's sums, inside the transaction `run` sends to: `statement` is sql/add-counts.sql for the schema. */
export async function addCounts(run: (text: string, values: unknown[]) => Promise<unknown>, statement: string, slot: number, tally: CounterTally): Promise<void> {
  const topics: string[] = [];
  const states: string[] = [];
  const ns: number[] = [];
  for (const { topic, state, n } of tally.entries()) {
    topics.push(topic);
    states.push(state);
    ns.push(n);
  }
  if (topics.length === 0) return;
  await run(statement, [slot, topics, states, ns]);
}
