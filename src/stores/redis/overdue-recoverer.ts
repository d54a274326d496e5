/**
 * The recoverer: after each lease tick, reservations in the shards this process owns that
 * ran out RECOVER_GRACE_MS ago or more go to its wheel (as remote timers), which expires
 * them. Their consumer's own process had its chance to expire them on time; still reserved
 * this late, that process has died.
 */
import type { Clock } from '../../core/ports/index.js';
import { loadDueScript } from './commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import type { RemoteTimers } from './remote-timers.js';

/** Reservations overdue by this much are expired by the shard owner (the consumer's own wheel had its chance). */
const RECOVER_GRACE_MS = 2_000;
/** Overdue reservations read per shard and tick: the rest come at the next tick. */
const RECOVER_PAGE = 500;

export class OverdueRecoverer {
  private stopped = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly clock: Clock,
    private readonly timers: RemoteTimers,
  ) {}

  /** Runs after a lease tick, over the shards held. */
  async recover(owned: readonly number[]): Promise<void> {
    if (this.stopped || !this.timers.listened) return;
    const until = this.clock.now() - RECOVER_GRACE_MS;
    for (const shard of owned) {
      const overdue = await loadDueScript(this.client, this.keys.shards[shard]!, until, null, RECOVER_PAGE, 'ttr');
      for (const entry of overdue) this.timers.emit({ ...entry });
    }
  }

  stop(): void {
    this.stopped = true;
  }
}
