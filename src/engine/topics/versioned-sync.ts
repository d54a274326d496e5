/**
 * A small set the store keeps with a version (the paused topics, the topics' limits), held
 * by this process and kept in step with the store: every `pauseSyncMs` it reads the store's and
 * applies it when its version moved. A change made through this process is applied at once
 * (`apply`); a read that started before that apply is older than it, and is dropped. A
 * failed read is logged and what is in force stays until a read succeeds.
 */
import type { TimerToken } from '../../core/ports/index.js';
import type { LoopContext } from '../loop-context.js';

export class VersionedSync<T extends { readonly version: string }> {
  private version: string | null = null;
  /**
   * When the last read that succeeded was sent (this process's clock): what it answered was
   * the store's set at some moment after that. -Infinity before the first (gate.ts leases).
   */
  confirmedAt = -Infinity;
  /** Moves with every apply: a read that started before one is older than it, and dropped. */
  private applied = 0;
  private timer: TimerToken | null = null;
  private running = false;

  private readonly context: Pick<LoopContext, 'clock' | 'logger' | 'inFlight' | 'tuning'>;
  private readonly params: {
    readonly read: () => Promise<T>;
    readonly apply: (value: T) => void;
    /** Names the set in the log line of a failed read. */
    readonly what: string;
  };

  constructor(context: Pick<LoopContext, 'clock' | 'logger' | 'inFlight' | 'tuning'>, params: VersionedSync<T>['params']) {
    this.context = context;
    this.params = params;
  }

  start(): void {
    this.running = true;
    this.tick();
  }

  stop(): void {
    this.running = false;
    if (this.timer !== null) this.context.clock.clearTimer(this.timer);
    this.timer = null;
  }

  /** Takes `value` as the store's set now (a change through this process, the read at open). */
  apply(value: T): void {
    this.applied++;
    this.version = value.version;
    this.params.apply(value);
  }

  /** Reads the store's set now and applies it if its version moved (and nothing was applied meanwhile: that one is newer). */
  async refresh(): Promise<void> {
    const before = this.applied;
    const sentAt = this.context.clock.now();
    const read = await this.context.inFlight.track(this.params.read());
    if (read.version !== this.version && this.applied === before) this.apply(read);
    // A read older than one applied since is no confirmation: that apply came with its own read.
    if (this.applied === before || read.version === this.version) this.confirmedAt = Math.max(this.confirmedAt, sentAt);
  }

  private tick(): void {
    this.timer = null;
    if (!this.running) return;
    this.refresh()
      .catch((error: unknown) => this.context.logger.warn({ err: error }, `reading the ${this.params.what} failed; the set in force stays until a read succeeds`))
      .finally(() => {
        if (this.running) this.timer = this.context.clock.setTimer(() => this.tick(), this.context.tuning.pauseSyncMs);
      });
  }
}
