/**
 * The batch methods of the store port (`ackMany`, `cancelMany`) for a store that has no
 * better way than one call per item, and `reserveRefs` for a store whose refs spare it
 * nothing over the ids: a store assigns these when it implements the port
 * (`ackMany = (acks, now) => ackEachOneByOne(this, acks, now)`), so the engine always
 * calls the batch method and never probes for it.
 *
 * The calls are issued together, as one call each would be: every outcome is what the
 * single call answers, in input order, and the batch resolves once every call has.
 */
import type { AckRequest, StoreAckOutcome, ConsumerStore, ProducerStore, StoreCancelOutcome } from './ports/index.js';
import type { ReservedTask, TimerRef } from './task/model.js';

export function ackEachOneByOne(store: Pick<ConsumerStore, 'ack'>, acks: readonly AckRequest[], now: number): Promise<StoreAckOutcome[]> {
  return Promise.all(acks.map((ack) => store.ack(ack.id, ack.receipt, now)));
}

export function cancelEachOneByOne(store: Pick<ProducerStore, 'cancel'>, ids: readonly string[], now: number): Promise<StoreCancelOutcome[]> {
  return Promise.all(ids.map((id) => store.cancel(id, now)));
}

export function reserveRefsByIds(store: Pick<ConsumerStore, 'reserve'>, refs: readonly TimerRef[], now: number, ttrMs?: number): Promise<ReservedTask[]> {
  return store.reserve(
    refs.map((ref) => ref.id),
    now,
    ttrMs,
  );
}
