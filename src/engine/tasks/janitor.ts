import type { Clock, InspectorStore, Logger, TimerToken } from '../../core/ports/index.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';

export interface JanitorOptions {
  /** Finished tasks are kept this long after their last change. */
  readonly retentionMs: number;
  /** Between the end of one purge and the start of the next. */
  readonly purgeIntervalMs: number;
  /** The most tasks one purge deletes. */
  readonly purgeBatch: number;
}

/**
 * Deletes completed and cancelled tasks past their retention (asynq's janitor), so their
 * rows and ids do not pile up: every `purgeIntervalMs` it asks the store to purge up to
 * `purgeBatch` tasks last changed more than `retentionMs` ago. One purge at a time: the
 * next is armed when the last has settled. A failed purge is logged and simply tried at
 * the next interval (nothing is lost by purging late).
 */
export class Janitor {
  private timer: TimerToken | null = null;
  private running = false;

  private readonly store: Pick<InspectorStore, 'purge'>;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly inFlight: InFlight;
  private readonly options: JanitorOptions;

  constructor(context: LoopContext) {
    ({ store: { tasks: this.store }, clock: this.clock, logger: this.logger, inFlight: this.inFlight, tuning: this.options } = context);
  }

  start(): void {
    this.running = true;
    this.arm();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private arm(): void {
    this.timer = this.clock.setTimer(() => this.purge(), this.options.purgeIntervalMs);
  }

  private purge(): void {
    this.timer = null;
    if (!this.running) return;
    void this.inFlight
      .track(this.store.purge(this.clock.now() - this.options.retentionMs, this.options.purgeBatch))
      .catch((error: unknown) => this.logger.error({ err: error }, 'purging finished tasks failed'))
      .finally(() => this.running && this.arm());
  }
}
