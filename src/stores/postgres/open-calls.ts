/**
 * The PostgreSQL store's open state, shared by its roles: every call of the tasks role and
 * the reservation read of the topics role goes through `guard`, which refuses it once the
 * store is closed and keeps it in flight until it settles, so close waits for the calls it
 * had accepted before the connections end.
 */
import { DelayQError } from '../../core/errors.js';

export class OpenCalls {
  private readonly inFlight = new Set<Promise<unknown>>();
  private isClosed = false;

  constructor(private readonly description: string) {}

  get closed(): boolean {
    return this.isClosed;
  }

  guard<T>(run: () => Promise<T>): Promise<T> {
    if (this.isClosed) return Promise.reject(closedError(this.description));
    const promise = run();
    this.inFlight.add(promise);
    const done = (): void => void this.inFlight.delete(promise);
    promise.then(done, done);
    return promise;
  }

  assertOpen(): void {
    if (this.isClosed) throw closedError(this.description);
  }

  /** Refuses every later call; resolves once the calls accepted before have settled. */
  close(): Promise<unknown> {
    this.isClosed = true;
    return Promise.allSettled([...this.inFlight]);
  }
}

function closedError(description: string): DelayQError {
  return new DelayQError('QUEUE_CLOSED', `${description} is closed`, { store: description });
}
