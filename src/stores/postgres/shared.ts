/**
 * The part several processes on one schema work through (SharedDispatch; docs/postgres.md,
 * "Several processes"):
 *
 *   producer (any process) --schedule--> shard s --NOTIFY timers--> owner of s: wheel
 *   owner's wheel fires ----promote---> NOTIFY ready <lane dueAt seq> -> long-polls wake
 *   consumer (any process) --reserve due (FOR UPDATE SKIP LOCKED)--> reserved once per attempt
 *
 * Shards are owned through leases with fencing tokens in `shard_leases`, kept by the shared
 * lease loop (src/stores/shared/lease-keeper.ts over lease-backend.ts): the owner keeps the
 * shard's timers, takes a dead process's shards within `takeoverMs`, reloads their timers
 * and expires their forgotten reservations. Promotion writes nothing: a due pending task is
 * reservable by its state and runAt alone, so a zombie that still believes it owns a shard
 * can only send a needless wakeup; what it writes with a stale receipt is refused.
 */
import type { Clock, Logger, RemoteTimerSource, SchedulePlanning, SharedDispatch } from '../../core/ports/index.js';
import type { ReservedTask, TimerRef } from '../../core/task/model.js';
import { ShardBatcher } from '../../coordination/batcher.js';
import { SharedLeaseKeeper } from '../../coordination/lease-keeper.js';
import { BadNotice, NoticeGuard, parsePgReadyNotice } from '../../coordination/notices.js';
import { ReadyWaiters } from '../../coordination/ready-waiters.js';
import { shardOf } from '../../coordination/router.js';
import { ScheduleOwners } from '../../coordination/schedule-owners.js';
import { RemoteTimers } from '../../coordination/remote-timers.js';
import { ShardLeases } from '../../coordination/shard-leases.js';
import { channelsOf, type Channels } from './channels.js';
import type { PgContext } from './context.js';
import { pgLeaseBackend } from './lease-backend.js';
import { Listener } from './listener.js';
import { keepEarliest, ReadyReserver, type DuePosition } from './ready-reserver.js';
import { OverdueRecoverer } from './overdue-recoverer.js';
import { pgTimerBackend } from './timer-backend.js';

/** A ready notice: `lane` has due tasks, the earliest of them at `from` (channels.ts). */
interface ReadyNotice {
  readonly lane: string;
  readonly from: DuePosition;
}

/** How long a dead process keeps its shards; a tick renews or takes leases every LEASE_MS / 5. */
export const LEASE_MS = 5_000;
/** While consumers wait, each lane is tried again this often: the safety net for a lost notification. */
const SWEEP_MS = 2_000;
/**
 * ... and this often while notifications do not reach the LISTEN connection (a pool through
 * pgbouncer without listenUrl, listener.ts): consumers poll, so a due task waits at most this
 * long (more for one due behind a lane's cursor: FULL_WALK_MS) instead of forever for a notice.
 */
export const POLL_MS = 500;

export interface SharedSetting {
  readonly pg: PgContext;
  readonly connectionString: string;
  readonly owner: string;
  readonly horizonMs: number;
  readonly clock: Clock;
  readonly logger: Logger;
}

export class PgShared implements SharedDispatch {
  readonly schedulePlanning: SchedulePlanning;
  readonly leases: ShardLeases;
  readonly remoteTimers: RemoteTimers;
  private readonly recoverer: OverdueRecoverer;
  private readonly channels: Channels;
  private readonly reserver: ReadyReserver;
  private readonly listener: Listener;
  private readonly guard: NoticeGuard;
  private readonly keeper: SharedLeaseKeeper;
  private readonly pg: PgContext;
  private readonly notices = new ShardBatcher<ReadyNotice, void>((_, notices) => this.announce(notices), 10_000);

  constructor({ pg, connectionString, owner, horizonMs, clock, logger }: SharedSetting) {
    this.pg = pg;
    this.channels = channelsOf(pg.schema);
    this.leases = new ShardLeases(owner, (shard) => logger.debug({ shard, owner }, 'postgres: gave up or lost a shard lease'));
    this.schedulePlanning = new ScheduleOwners(this.leases, pg.shards, LEASE_MS + Math.floor(LEASE_MS / 5));
    this.guard = new NoticeGuard('postgres', ['timers', 'ready'], logger, clock);
    this.remoteTimers = new RemoteTimers({ backend: pgTimerBackend(pg, this.channels), leases: this.leases, clock, horizonMs, guard: this.guard });
    this.recoverer = new OverdueRecoverer(pg, clock, this.remoteTimers);
    const waiters = new ReadyWaiters(1, SWEEP_MS, clock);
    this.reserver = new ReadyReserver(pg, waiters);
    this.listener = new Listener(connectionString, this.channels, owner, clock, logger, {
      timers: (payload) => this.remoteTimers.receive(payload),
      ready: (payload) => {
        const notice = parsePgReadyNotice(payload);
        if (notice instanceof BadNotice) this.guard.drop('ready', notice, payload);
        else this.reserver.notify(notice.lane, notice.from);
      },
      // Notices sent while we were away are lost: try every lane again and reload our timers.
      reconnected: () => this.catchUp(),
      probe: (payload) => pg.query(pg.sql('notify'), [this.channels.probe, [payload]]),
      arriving: (yes) => {
        if (yes) {
          logger.info({ owner }, 'postgres: notifications reach the LISTEN connection again; consumers wait for them (polling stopped)');
          waiters.setSweepMs(SWEEP_MS);
          this.catchUp();
          return;
        }
        logger.warn(
          { owner, pollMs: POLL_MS },
          `postgres: notifications do not reach the LISTEN connection (a transaction pooler such as pgbouncer on the store URL? give listenUrl, a direct connection to the same database); consumers poll every ${POLL_MS} ms instead`,
        );
        waiters.setSweepMs(POLL_MS);
        waiters.flagAll();
      },
    });
    let tickFailing = false;
    this.keeper = new SharedLeaseKeeper(pgLeaseBackend(pg), this.leases, LEASE_MS, clock, {
      acquired: (shard) => {
        logger.debug({ shard, owner }, 'postgres: took a shard lease');
        void this.remoteTimers.loadShard(shard);
      },
      afterTick: (owned) => this.recoverer.recover(owned),
      healthy: () => {
        if (tickFailing) logger.info({ owner, shards: this.leases.size }, 'postgres: lease ticks work again');
        tickFailing = false;
      },
      error: (error) => {
        if (!tickFailing) logger.error({ err: error, owner }, 'postgres: a lease tick failed; a lease not renewed runs out unless a later tick renews it (retrying every tick)');
        tickFailing = true;
      },
    });
  }

  /** Listens first (no timer notice for a shard we take is missed), then takes this process's share of the shards. */
  async start(): Promise<void> {
    await this.listener.start();
    try {
      await this.keeper.start();
    } catch (error) {
      await this.listener.stop();
      throw error;
    }
  }

  /** Every lane tried again and the owned shards' timers reloaded: notices may have been lost. */
  private catchUp(): void {
    this.reserver.flagAll();
    for (const shard of this.leases.owned()) void this.remoteTimers.loadShard(shard);
  }

  /** The shards this process owns now, or null when it owns them all. */
  owned(): readonly number[] | null {
    return this.leases.size === this.pg.shards ? null : this.leases.owned();
  }

  /**
   * Due run timers of owned shards: their lanes are announced, to this process's consumers
   * at once and to the others by NOTIFY. A wheel fires every millisecond through a burst, so
   * the notices are coalesced: one statement in flight, the lanes announced meanwhile go in
   * the next (a waiting consumer needs one notice per lane, not one per timer).
   */
  promote(refs: readonly TimerRef[], now: number): Promise<void> {
    const earliest = new Map<string, DuePosition>();
    for (const ref of refs)
      if (ref.kind === 'run' && ref.dueAt <= now && this.leases.owns(shardOf(ref.id, this.pg.shards))) keepEarliest(earliest, ref.topic, { dueAt: ref.dueAt, seq: ref.seq });
    if (earliest.size === 0) return Promise.resolve();
    for (const [lane, from] of earliest) this.reserver.notify(lane, from);
    return this.notices.submit(0, [...earliest].map(([lane, from]) => ({ lane, from }))).then(() => undefined);
  }

  /** One notice per lane, at the earliest position announced for it meanwhile. */
  private announce(notices: readonly ReadyNotice[]): Promise<void[]> {
    const earliest = new Map<string, DuePosition>();
    for (const { lane, from } of notices) keepEarliest(earliest, lane, from);
    const payloads = [...earliest].map(([lane, from]) => `${lane} ${from.dueAt} ${from.seq}`);
    return this.pg
      .query(this.pg.sql('notify'), [this.channels.ready, payloads])
      .then(() => notices.map(() => undefined));
  }

  reserveReady(topic: string, max: number, now: () => number, ttrMs: number | undefined, signal: AbortSignal): Promise<ReservedTask[]> {
    return this.reserver.reserveReady(topic, max, now, ttrMs, signal);
  }

  onRemoteTimer(listener: (ref: TimerRef, source: RemoteTimerSource) => void): void {
    this.remoteTimers.listen(listener);
  }

  badNotices(): ReadonlyMap<string, number> {
    return this.guard.counts();
  }

  /** Hands the shards over at once (a clean stop), then stops listening. */
  async stop(): Promise<void> {
    this.reserver.stop();
    this.remoteTimers.stop();
    this.recoverer.stop();
    await this.keeper.stop();
    await this.listener.stop();
  }
}
