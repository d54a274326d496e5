/**
 * A batch over a store cut into partitions (the shards of a shared store) is atomic per
 * partition, not as a whole: when some partitions answer and others cannot be written, the
 * answered items are done. The call still rejects (the caller asked for all of them), but
 * with this error, which keeps the outcomes of the items that were done, so the engine acts
 * on them (places their timers, counts them) and the caller retries only the rest:
 * `details.failedIndexes`, the positions in the batch that were not done.
 */
import { DelayQError } from './errors.js';

export class PartialBatchError<O> extends DelayQError {
  /** Per item of the batch, in its order: the outcome, or undefined where its partition failed. */
  readonly outcomes: readonly (O | undefined)[];

  constructor(outcomes: readonly (O | undefined)[], failedPartitions: readonly number[], cause: DelayQError) {
    const failedIndexes: number[] = [];
    for (let i = 0; i < outcomes.length; i++) if (outcomes[i] === undefined) failedIndexes.push(i);
    super(
      'STORE_UNAVAILABLE',
      `${failedIndexes.length} of ${outcomes.length} items were not done (partitions ${failedPartitions.join(', ')} could not be written: ${cause.message}); the others were: retry only the failed ones (details.failedIndexes)`,
      { failedIndexes, failedPartitions: [...failedPartitions] },
      { cause },
    );
    this.name = 'PartialBatchError';
    this.outcomes = outcomes;
  }

  /** The same failure with each done item's outcome mapped (the engine's outcome to the caller's result). */
  map<R>(fn: (outcome: O, index: number) => R): PartialBatchError<R> {
    const cause = this.cause instanceof DelayQError ? this.cause : new DelayQError('STORE_UNAVAILABLE', this.message);
    return new PartialBatchError(
      Array.from({ length: this.outcomes.length }, (_, i) => (this.outcomes[i] === undefined ? undefined : fn(this.outcomes[i]!, i))),
      (this.details?.['failedPartitions'] as number[] | undefined) ?? [],
      cause,
    );
  }
}

/** Runs `body` on every done outcome of a partial failure, then rethrows it; any other error is rethrown as is. */
export function onPartial<O>(error: unknown, body: (outcomes: readonly (O | undefined)[]) => void): never {
  if (error instanceof PartialBatchError) body(error.outcomes as readonly (O | undefined)[]);
  throw error;
}
