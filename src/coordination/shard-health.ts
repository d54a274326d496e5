/**
 * Which shards of a shared store cannot take writes now, since when, and why: a Redis
 * Cluster master that lost its replicas under `waitReplicas`, a master that is down until its
 * replica takes over, any partition of a shared store that refuses a write.
 *
 * Every part that spans shards (consumers' reserves, promotion, loading, batch calls) asks
 * it per shard, so one degraded shard holds back only its own tasks: a shard marked
 * unavailable is skipped instead of failing each call after a write timeout. Nobody retries
 * it in a loop: this part alone probes it, every `probeMs`, with a write the store supplies,
 * and calls its `recovered` listeners once a write works again (the store then reloads the
 * shard's timers and tells its consumers to look there). A transition is logged once, never
 * per call.
 */
import { DelayQError, isDelayQError } from '../core/errors.js';
import type { Clock, Logger, TimerToken } from '../core/ports/index.js';

/** The error text kept per shard (stats carry it). */
const MAX_ERROR_CHARS = 300;

export interface UnavailableShard {
  readonly shard: number;
  /** When a write to it first failed (ms since the epoch, the store's clock). */
  readonly since: number;
  /** The last failure, as the store said it. */
  readonly error: string;
}

export class ShardHealth {
  private readonly down = new Map<number, { since: number; error: string }>();
  private readonly recoveredListeners: ((shard: number) => void)[] = [];
  private timer: TimerToken | null = null;
  private probing = false;
  private stopped = false;

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    /** Names the store in log lines ("redis"). */
    private readonly what: string,
    /** One write to the shard that fails while it cannot take writes (the store's probe). */
    private readonly probe: (shard: number) => Promise<void>,
    private readonly probeMs = 1_000,
  ) {}

  /** The shard took a write: if it was unavailable, it is no longer. */
  succeeded(shard: number): void {
    const was = this.down.get(shard);
    if (was === undefined) return;
    this.down.delete(shard);
    this.logger.info({ shard, unavailableMs: this.clock.now() - was.since }, `${this.what}: shard ${shard} takes writes again`);
    for (const listener of this.recoveredListeners) listener(shard);
  }

  /**
   * A write to the shard failed. Only a store that could not do it (STORE_UNAVAILABLE)
   * marks the shard; any other error is the caller's. Answers whether it was marked.
   */
  failed(shard: number, error: unknown): boolean {
    if (!isDelayQError(error, 'STORE_UNAVAILABLE')) return false;
    const message = error.message.slice(0, MAX_ERROR_CHARS);
    const was = this.down.get(shard);
    if (was !== undefined) {
      was.error = message;
      return true;
    }
    this.down.set(shard, { since: this.clock.now(), error: message });
    this.logger.warn({ shard, err: error }, `${this.what}: shard ${shard} cannot take writes; its tasks wait, the other shards go on (probed every ${this.probeMs} ms)`);
    this.arm();
    return true;
  }

  /**
   * Runs `call`, a write to `shard`, and records how it went; while the shard is marked
   * unavailable, rejects at once instead (STORE_UNAVAILABLE): a write there would only wait
   * out the store's timeout to fail, and the probe finds out when it works again.
   */
  async track<T>(shard: number, call: () => Promise<T>): Promise<T> {
    const down = this.down.get(shard);
    if (down !== undefined)
      throw new DelayQError('STORE_UNAVAILABLE', `${this.what}: shard ${shard} cannot take writes since ${new Date(down.since).toISOString()} (${down.error})`, { shard });
    try {
      const result = await call();
      this.succeeded(shard);
      return result;
    } catch (error) {
      this.failed(shard, error);
      throw error;
    }
  }

  available(shard: number): boolean {
    return !this.down.has(shard);
  }

  unavailable(): UnavailableShard[] {
    return [...this.down].sort(([a], [b]) => a - b).map(([shard, { since, error }]) => ({ shard, since, error }));
  }

  onRecovered(listener: (shard: number) => void): void {
    this.recoveredListeners.push(listener);
  }

  /** No more probes (the store is closing). */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
  }

  private arm(): void {
    if (this.timer !== null || this.probing || this.stopped || this.down.size === 0) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      void this.probeAll();
    }, this.probeMs);
  }

  private async probeAll(): Promise<void> {
    this.probing = true;
    try {
      await Promise.all(
        [...this.down.keys()].map(async (shard) => {
          try {
            await this.probe(shard);
            this.succeeded(shard);
          } catch (error) {
            if (!this.failed(shard, error)) this.logger.warn({ shard, err: error }, `${this.what}: probing shard ${shard} failed`);
          }
        }),
      );
    } finally {
      this.probing = false;
      this.arm();
    }
  }
}
