import type { Delivery, ReservedTask, TimerRef } from '../../core/task/model.js';
import type { DeliveryGate } from '../topics/delivery-gate.js';
import type { Backlog } from '../timers/loader.js';

/** Gives reservations back uncounted, due again at their runAt (LoopRunner.defer, for each). */
export type GiveBack = (records: readonly ReservedTask[]) => Promise<void>;

/**
 * The check before `reserved` reaches a consumer (delivery-gate.ts): the records, when the
 * topic's rules are still those of `token` by a view within its lease; else null, once they
 * were given back (a failure to give them back leaves them to their ttr).
 */
export async function handOutOrGiveBack(gate: DeliveryGate, topic: string, token: string, reserved: readonly ReservedTask[], giveBack: GiveBack): Promise<readonly ReservedTask[] | null> {
  let changed: boolean;
  try {
    changed = await gate.changedSince(topic, token);
  } catch (error) {
    // No view to trust (the store out of reach): these go back too, and the caller's reserve fails.
    await giveBack(reserved).catch(() => undefined);
    throw error;
  }
  if (!changed) return reserved;
  await giveBack(reserved).catch(() => undefined);
  return null;
}

/** A reserved task as its consumer gets it; null when its row cannot be read (it is quarantined: engine/tasks/quarantine.ts). */
export type Deliver = (record: ReservedTask, now: number) => Delivery | null;

/** The deliveries of the tasks a reserve returned, without those `deliver` quarantined. */
export function deliverAll(reserved: readonly ReservedTask[], now: number, deliver: Deliver): Delivery[] {
  const deliveries: Delivery[] = [];
  for (const record of reserved) {
    const delivery = deliver(record, now);
    if (delivery !== null) deliveries.push(delivery);
  }
  return deliveries;
}

/**
 * How due tasks reach consumers. Two implementations, picked once by the queue for its
 * store:
 * - LocalDispatcher (one process owns the store: memory, SQLite): due tasks wait in an
 *   in-process ReadyQueue, and a consumer reserves them in the store by their refs.
 * - SharedDispatcher (several processes share the store: Redis): due tasks are promoted
 *   into the store's ready lists, and a consumer reserves from those, so consumers of any
 *   process get the tasks whichever process's wheel held them.
 * Either way the store's reservation decides: a task cancelled or moved after it fell due
 * is never delivered.
 */
export interface Dispatcher extends Backlog {
  start(): void;
  /** Makes the due 'run' timers among `due` available to consumers (the 'ttr' ones are the expirer's). */
  dispatch(due: readonly TimerRef[]): void;
  /**
   * Reserves up to `max` due tasks of `topic` and delivers them, waiting while there are
   * none until `signal` aborts (then answers []). A stopped dispatcher answers [] at once.
   */
  reserve(topic: string, max: number, signal: AbortSignal, ttrMs: number | undefined, deliver: Deliver): Promise<Delivery[]>;
  /** The run timers of purged tasks (TopicPurgeStep.runs): due ones waiting here are forgotten (the ready gauges), all of them by `final` (the purge ended). */
  forget(refs: readonly TimerRef[], final: boolean): void;
  /** Due tasks waiting for a consumer in this process, by topic. */
  backlogByTopic(): Readonly<Record<string, number>>;
  /** The due time of the longest-waiting task of each topic here (SharedDispatcher: none; the ready lists are in the store). */
  oldestReadyByTopic(): Readonly<Record<string, number>>;
  /** Reserves no more, and lets every wait on the backlog go (close() must not hang). */
  stop(): void;
}
