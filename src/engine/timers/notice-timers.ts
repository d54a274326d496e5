/**
 * Timers that other processes' messages told of (SharedDispatch.onRemoteTimer, `notice`: a
 * NOTIFY or PUBLISH naming a task of a partition this process owns). The store checked each
 * message's shape and bounds, but anyone who can reach the store may send one, so a notice
 * may only make the engine look again at a time, nothing more:
 *
 * - its timer waits beside the task's own timer, never in its place (TimerDriver.hint), so a
 *   forged time cannot hold a task back; when it fires the store decides (never early);
 * - at most MAX_NOTICE_TIMERS of them wait at once, so a flood cannot fill the memory (one
 *   more is dropped: the loader finds its task all the same, at its next read);
 * - a push lane this process has no consumer for is started only once a read of the task
 *   shows the lane is real, so made-up lanes start no workers.
 */
import { isPushLane, laneOf, type TimerRef } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';
import type { TimerDriver } from './timer-driver.js';

export const MAX_NOTICE_TIMERS = 100_000;
/** Reads of tasks of unknown push lanes in flight at once; more are left to the loader. */
const MAX_LANE_CHECKS = 16;
const WARN_EVERY_MS = 60_000;

export interface NoticeTimerParams {
  readonly driver: TimerDriver;
  /** Where the loaded window ends now (Loader.loadTarget): a timer beyond it is the loader's. */
  readonly window: () => number;
  /** Whether timers are still placed (not sealed). */
  readonly open: () => boolean;
  /** A timer due already: handed on at once. */
  readonly due: (ref: TimerRef) => void;
  /** Whether a push lane has its consumer here. */
  readonly knowsLane: (lane: string) => boolean;
}

export class NoticeTimers {
  private readonly realLanes = new Set<string>();
  private checking = 0;
  private warnedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight'>,
    private readonly params: NoticeTimerParams,
  ) {}

  place(ref: TimerRef): void {
    const { driver, window, open, due, knowsLane } = this.params;
    if (!open() || ref.kind !== 'run' || !Number.isSafeInteger(ref.dueAt) || ref.dueAt >= window()) return;
    if (driver.hinted >= MAX_NOTICE_TIMERS) return this.full();
    if (isPushLane(ref.topic) && !this.realLanes.has(ref.topic) && !knowsLane(ref.topic)) return this.checkLane(ref);
    if (!driver.hint(ref)) due(ref);
  }

  /** Reads the task: a notice of a push lane unknown here starts it only if the task is of that lane. */
  private checkLane(ref: TimerRef): void {
    if (this.checking >= MAX_LANE_CHECKS) return;
    this.checking++;
    const { store, inFlight } = this.context;
    void inFlight
      .track(store.tasks.get(ref.id))
      .then(
        (record) => {
          if (record === null || record.state !== 'pending' || laneOf(record.topic, record.url) !== ref.topic) return;
          this.realLanes.add(ref.topic);
          this.place(ref);
        },
        () => undefined,
      )
      .finally(() => this.checking--);
  }

  private full(): void {
    const now = this.context.clock.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.context.logger.warn(
      { waiting: MAX_NOTICE_TIMERS },
      `${MAX_NOTICE_TIMERS} timers told by other processes' messages are waiting: more are dropped until some fire (the loader finds their tasks at its next read)`,
    );
  }
}
