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
 *
 * A process's base moves to the next one every COUNTER_ROTATE_MS (PgContext.slotOf). Each
 * upsert of a row leaves a version behind, and while the xmin horizon is held (a session idle
 * in a transaction, a long REPEATABLE READ reader) none can be removed: a row updated by every
 * reserve for 3 minutes carried some 13,000 versions, which every later upsert of it walked
 * (a reserve's or an ack's statement read 524-564 buffers instead of 262-276; ADR 0055). A
 * row written for 10 s at a time carries at most those 10 s of versions.
 */
import type { CounterTally } from '../../core/task/counter-deltas.js';

/** Counter slot bases: a process picks one at random; more bases, fewer processes sharing a row. */
export const COUNTER_SLOTS = 64;
/** A process writes the rows of one base this long, then those of the next (see above). */
export const COUNTER_ROTATE_MS = 10_000;
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
