/**
 * The recoverer: after each lease tick, over the shards this process owns, timers that are
 * RECOVER_GRACE_MS overdue go to its wheel (as remote timers):
 *
 * - Reservations that ran out, which the wheel expires. Their consumer's own process had
 *   its chance to expire them on time; still reserved this late, that process has died.
 * - Pending tasks that fell due since the last tick, which the wheel promotes. A task that
 *   another process schedules (or moves) into a shard this process owns reaches this wheel
 *   only on the timers channel, and pub/sub delivers at most once; the loader never reads
 *   below its load target again. On a Redis Cluster such a message is lost when the node
 *   that took the PUBLISH dies before its cluster bus passes it on, when the PUBLISH fails
 *   while the cluster fails over (timer-backend.ts drops it: fire and forget), or while
 *   ioredis moves the subscriber off a node that died (it resubscribes elsewhere and emits
 *   no 'ready', so nothing reloads). The task then stayed pending and due in no wheel and no ready list
 *   until its shard changed hands: acknowledged, never delivered. Each pending timer is read
 *   here once, by a cursor per shard over (dueAt, seq): a task that is still pending then
 *   because it waits in a ready list (consumers behind) is listed there once more, which
 *   costs a stale pop (reserve-ready.lua reserves it once).
 *
 * Not covered: a task given a runAt already more than RECOVER_GRACE_MS past when it was
 * scheduled falls behind the cursor; if its timer message is lost too, it waits for the next
 * reload of its shard (a takeover, a reconnect, the shard taking writes again).
 */
import type { Clock, DueCursor } from '../../core/ports/index.js';
import { loadDueScript } from './commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import type { RemoteTimers } from '../../coordination/remote-timers.js';

/** Timers overdue by this much are the shard owner's to recover (the usual path had its chance). */
const RECOVER_GRACE_MS = 2_000;
/** Overdue timers read per shard, kind and tick: the rest come at the next tick. */
const RECOVER_PAGE = 500;

export class OverdueRecoverer {
  private stopped = false;
  /** Per shard held: the last pending timer read (those after it are read at the next tick). */
  private readonly runCursors = new Map<number, DueCursor>();

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly clock: Clock,
    private readonly timers: RemoteTimers,
  ) {}

  /** Runs after a lease tick, over the shards held. A shard that fails holds back only itself; the first error is thrown after the others. */
  async recover(owned: readonly number[]): Promise<void> {
    if (this.stopped || !this.timers.listened) return;
    const until = this.clock.now() - RECOVER_GRACE_MS;
    // A shard given up and taken again was loaded whole when taken: its cursor starts afresh.
    for (const shard of [...this.runCursors.keys()]) if (!owned.includes(shard)) this.runCursors.delete(shard);
    let failure: { error: unknown } | null = null;
    for (const shard of owned) {
      try {
        const overdue = await loadDueScript(this.client, this.keys.shards[shard]!, until, null, RECOVER_PAGE, 'ttr');
        for (const entry of overdue) this.timers.emit({ ...entry });
        await this.recoverRuns(shard, until);
      } catch (error) {
        failure ??= { error };
      }
    }
    if (failure !== null) throw failure.error;
  }

  stop(): void {
    this.stopped = true;
  }

  /** Pending timers of `shard` due after its cursor and before `until`; the cursor moves only past what was read. */
  private async recoverRuns(shard: number, until: number): Promise<void> {
    const upTo: DueCursor = { dueAt: until - 1, seq: Number.MAX_SAFE_INTEGER };
    const cursor = this.runCursors.get(shard);
    // First tick holding it: the shard's timers were loaded whole when it was taken (or at
    // start), a tick ago at most, and tasks scheduled since are due after `until`.
    if (cursor === undefined) {
      this.runCursors.set(shard, upTo);
      return;
    }
    if (cursor.dueAt >= upTo.dueAt) return;
    const page = await loadDueScript(this.client, this.keys.shards[shard]!, until, cursor, RECOVER_PAGE, 'run');
    for (const entry of page) this.timers.emit({ ...entry });
    const last = page[page.length - 1];
    this.runCursors.set(shard, last !== undefined && page.length === RECOVER_PAGE ? { dueAt: last.dueAt, seq: last.seq } : upTo);
  }
}
