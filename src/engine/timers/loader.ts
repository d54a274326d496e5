import type { LoaderOptions } from '../../core/options.js';
import type { Clock, DueCursor, Logger, TimerSource, TimerToken } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';

/** Due tasks waiting for a consumer: the loader pauses while there are too many. */
export interface Backlog {
  /** Resolves once at most `level` due tasks wait for a consumer. */
  whenBacklogAtMost(level: number): Promise<void>;
}

/**
 * Keeps the wheel filled with the store's timers due within the horizon. Only that window
 * lives in memory; the rest stays in the store and is read by range as time moves on.
 *
 * `loadTarget` is the exclusive upper bound of what belongs in the wheel. It is raised
 * before each pass is read, so a task scheduled while a pass is in flight is placed by
 * its producer (its dueAt is below the new target) even if the pass misses it; a pass that
 * also sees it finds the timer already held and skips it.
 */
export class Loader {
  private target = Number.NEGATIVE_INFINITY;
  private cursor: DueCursor | null = null;
  private running = false;
  private timer: TimerToken | null = null;
  private pass: Promise<void> | null = null;

  private readonly source: TimerSource;
  private readonly clock: Clock;
  private readonly logger: Logger;
  /** The store's: how far ahead its timers are held in the wheel. */
  private readonly horizonMs: number;
  private readonly options: LoaderOptions;
  private readonly place: (ref: TimerRef) => void;
  private readonly backlog: Backlog;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'tuning'>, { place, backlog }: { place: (ref: TimerRef) => void; backlog: Backlog }) {
    ({ store: { tasks: this.source }, clock: this.clock, logger: this.logger } = context);
    this.horizonMs = context.store.horizonMs;
    this.options = context.tuning.loader;
    this.place = place;
    this.backlog = backlog;
  }

  /** Timers due before this belong in the wheel (producers place them themselves). */
  get loadTarget(): number {
    return this.target;
  }

  start(): void {
    this.running = true;
    this.runPass();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    await this.pass;
  }

  private runPass(): void {
    this.timer = null;
    if (!this.running) return;
    this.pass = this.loadUpTo(this.clock.now() + this.horizonMs).then(
      () => this.scheduleNext(Math.max(1_000, Math.floor(this.horizonMs / 4))),
      (error: unknown) => {
        this.logger.error({ err: error }, 'loading due timers failed; retrying');
        this.scheduleNext(this.options.retryMs);
      },
    );
  }

  private scheduleNext(delayMs: number): void {
    if (!this.running || !Number.isFinite(this.horizonMs)) return;
    this.timer = this.clock.setTimer(() => this.runPass(), delayMs);
  }

  private async loadUpTo(until: number): Promise<void> {
    if (until <= this.target) return;
    const from = this.target;
    this.target = until;
    // Each pass starts where the previous one's range ended; a failed pass resumes at its cursor.
    let after: DueCursor | null = this.cursor ?? (Number.isFinite(from) ? { dueAt: from - 1, seq: Number.MAX_SAFE_INTEGER } : null);
    for (;;) {
      await this.backlog.whenBacklogAtMost(this.options.maxReadyBacklog);
      if (!this.running) return;
      this.cursor = after;
      const page = await this.source.loadDue(until, after, this.options.pageSize);
      for (const ref of page) this.place(ref);
      if (page.length < this.options.pageSize) break;
      const last = page[page.length - 1]!;
      after = { dueAt: last.dueAt, seq: last.seq };
    }
    this.cursor = null;
  }
}
