import { PartialBatchError } from '../../core/partial-batch.js';
import type { SharedDispatch } from '../../core/ports/index.js';
import type { TimerRef } from '../../core/task/model.js';
import type { LoopContext } from '../loop-context.js';
import { RetryingLoop } from '../retry-timers.js';

/**
 * Promotes due tasks into a shared store's ready lists (asynq's forwarder), where the
 * consumers of every process reserve them. The refs come from this process's wheel, which
 * holds only the timers of the store partitions it owns; the store ignores refs of tasks
 * no longer pending and due, so promoting twice is harmless.
 *
 * A rejected promotion may have made nothing ready, so the same refs are promoted again
 * after `storeRetryMs`, until the store answers or the queue stops: a due task must not
 * wait for a restart to be delivered.
 */
export class Promoter extends RetryingLoop {
  private readonly store: SharedDispatch;

  /** `shared`: the store's coordination part (`store.coordination`), which promotes. */
  constructor(context: LoopContext, { shared }: { shared: SharedDispatch }) {
    super(context);
    this.store = shared;
  }

  promote(refs: readonly TimerRef[]): void {
    if (refs.length === 0 || !this.running) return;
    const promotion = this.inFlight.track(this.store.promote(refs, this.clock.now())).catch((error: unknown) => {
      // A store cut into partitions fails only the refs of those it could not write: the
      // store reports those partitions itself (once per transition), and only they wait.
      if (error instanceof PartialBatchError) {
        const left = refs.filter((_, i) => error.outcomes[i] === undefined);
        if (this.running) this.retries.later(() => this.promote(left));
        return;
      }
      this.logger.error({ err: error, count: refs.length }, 'making due tasks ready failed; will retry');
      if (this.running) this.retries.later(() => this.promote(refs));
    });
    void promotion;
  }
}
