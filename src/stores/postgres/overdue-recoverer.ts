/**
 * The recoverer: after a lease tick, at most every RECOVER_EVERY_MS, reservations of the
 * shards this process owns that ran out RECOVER_GRACE_MS ago go to its wheel (as remote
 * timers), which expires them: their consumer's own process had its chance to expire them
 * on time; still reserved this late, that process has died.
 */
import type { RemoteTimers } from '../../coordination/remote-timers.js';
import type { Clock } from '../../core/ports/index.js';
import type { PgContext } from './context.js';
import { overdueReservations } from './inspection.js';

/** Reservations overdue by this much are expired by the shard owner (the consumer's own wheel had its chance). */
const RECOVER_GRACE_MS = 2_000;
/**
 * The recovery reads the due range of tasks_due and passes over the pending tasks in it (a
 * burst's backlog): at most this often, not at every lease tick.
 */
const RECOVER_EVERY_MS = 5_000;
const RECOVER_PAGE = 500;

export class OverdueRecoverer {
  private recoveredAt = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly pg: PgContext,
    private readonly clock: Clock,
    private readonly timers: RemoteTimers,
  ) {}

  async recover(owned: readonly number[]): Promise<void> {
    const now = this.clock.now();
    if (this.stopped || !this.timers.listened || owned.length === 0 || now - this.recoveredAt < RECOVER_EVERY_MS) return;
    this.recoveredAt = now;
    for (const ref of await overdueReservations(this.pg, owned, now - RECOVER_GRACE_MS, RECOVER_PAGE)) this.timers.emit(ref);
  }

  stop(): void {
    this.stopped = true;
  }
}
