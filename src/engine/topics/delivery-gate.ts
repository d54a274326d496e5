/**
 * The check every delivery passes before it reaches a consumer (issue 46, ADR 0052): a
 * topic's pause and limits as this process holds them, and whether that view may still be
 * trusted, so that a pause or limit set through any process holds for every delivery that
 * starts after the call returned, in every process sharing the store.
 *
 * A lease, not a notice: the paused topics and the limits are read every `pauseSyncMs`
 * (VersionedSync), and a view confirmed by a read sent at `s` is trusted until
 * `s + 2 x pauseSyncMs - GATE_MARGIN_MS`. A pause or limit set through a process sharing the
 * store returns only `2 x pauseSyncMs` after its write (topics.ts): any view that does not
 * have it was confirmed before the write, so its lease is over by then, and a delivery that
 * starts after the call either saw a view that has it or waited for one (`fresh`, a read
 * now). A frozen process wakes with its lease over. What it assumes is that the processes'
 * clocks run at the same rate (not that they agree), over a few seconds; and every process
 * sharing a store is given the same pauseSyncMs (the setter's at least the others').
 *
 * A reserve takes the topic's `tokenOf` before it admits and reserves, and compares it again
 * once the tasks came back and the view is fresh: a change in between (a pause, limits set
 * or cleared) gives them back uncounted, and the reserve starts over under the rules now in
 * force. Reservations already being admitted are held to it too.
 *
 *   pauseSyncMs 1000; B pauses "mail" at t = 300 (write), returns at 2300
 *     A read at t = 0 (no pause): trusted until 1950; A's reserve answered at 1990 finds the
 *     lease over, reads (pause in it), gives the tasks back; A's next reserve waits for resume
 */
import { encodeTopicLimits } from '../../core/flow/limits.js';
import type { LoopContext } from '../loop-context.js';
import type { FlowControl } from './flow-control.js';
import type { TopicPauses } from './topic-pauses.js';

/** A lease ends this long before its time: the clocks' rates may differ a little, and a delivery starts a moment after its check. */
export const GATE_MARGIN_MS = 50;

/** How long a setter waits after its write on a shared store, and how long a view is trusted after its read: 2 x pauseSyncMs. */
export function gateLeaseMs(pauseSyncMs: number): number {
  return 2 * pauseSyncMs;
}

export class DeliveryGate {
  private refreshing: Promise<void> | null = null;
  private readonly leaseMs: number;

  constructor(
    private readonly context: Pick<LoopContext, 'clock' | 'tuning' | 'store'>,
    private readonly pauses: Pick<TopicPauses, 'has' | 'refresh' | 'confirmedAt'>,
    private readonly flow: Pick<FlowControl, 'limitsOf' | 'refresh' | 'confirmedAt'>,
  ) {
    this.leaseMs = gateLeaseMs(context.tuning.pauseSyncMs);
  }

  /** The topic's pause and limits as held now: equal tokens, the same rules. */
  tokenOf(topic: string): string {
    if (this.pauses.has(topic)) return 'paused';
    const limits = this.flow.limitsOf(topic);
    return limits === undefined ? '' : encodeTopicLimits(limits);
  }

  /**
   * Null while the view is within its lease (a store one process owns: always, its changes
   * apply here at once); else a read of both, shared by every caller meanwhile.
   */
  fresh(): Promise<void> | null {
    if (this.context.store.coordination === null) return null;
    const trustedUntil = Math.min(this.pauses.confirmedAt(), this.flow.confirmedAt()) + this.leaseMs - GATE_MARGIN_MS;
    if (this.context.clock.now() < trustedUntil) return null;
    this.refreshing ??= Promise.all([this.pauses.refresh(), this.flow.refresh()]).then(
      () => void (this.refreshing = null),
      (error: unknown) => {
        this.refreshing = null;
        throw error;
      },
    );
    return this.refreshing;
  }

  /** Whether `topic`'s rules moved since `token` was taken, by a view within its lease (read now if it was not). */
  async changedSince(topic: string, token: string): Promise<boolean> {
    const waiting = this.fresh();
    if (waiting !== null) await waiting;
    return this.tokenOf(topic) !== token;
  }
}
