/**
 * POST /v1/tasks/batch answers per task, while the library's scheduleMany is all or
 * nothing (or, on a store cut into partitions, all or nothing per partition: PartialBatchError). Fast path: one scheduleMany for the whole batch. Only when it names a bad task
 * does the slow path check each task alone, report the bad ones, and store the rest in one
 * call (retrying without any task that turns bad between the check and the write, such as
 * a runAt that crossed the delay bound meanwhile).
 */
import { DelayQError } from '../core/errors.js';
import { PartialBatchError } from '../core/partial-batch.js';
import { validateScheduleInput, type Limits, type ScheduleInput } from '../core/task/validate.js';
import type { EngineQueue } from '../engine/engine-queue.js';
import type { BatchItemResult } from '../wire/types.js';
import { errorBody } from './errors.js';

export async function scheduleBatch(queue: EngineQueue, tasks: readonly unknown[], limits: Limits): Promise<BatchItemResult[]> {
  try {
    return await queue.scheduleMany(tasks as ScheduleInput[]);
  } catch (error) {
    if (error instanceof PartialBatchError) return perItem(error as PartialBatchError<BatchItemResult>);
    if (indexOfBadTask(error, tasks.length) === null) throw error;
  }
  const results: (BatchItemResult | undefined)[] = new Array<BatchItemResult | undefined>(tasks.length);
  let pending: number[] = [];
  const now = queue.clock.now();
  const noId = (): string => 'x';
  tasks.forEach((task, index) => {
    try {
      validateScheduleInput(task, now, noId, limits);
      pending.push(index);
    } catch (error) {
      if (!(error instanceof DelayQError)) throw error;
      results[index] = itemError(error, index);
    }
  });
  while (pending.length > 0) {
    try {
      const stored = await queue.scheduleMany(pending.map((i) => tasks[i] as ScheduleInput));
      stored.forEach((result, k) => (results[pending[k]!] = result));
      break;
    } catch (error) {
      if (error instanceof PartialBatchError) {
        perItem(error as PartialBatchError<BatchItemResult>).forEach((result, k) => (results[pending[k]!] = result));
        break;
      }
      const bad = indexOfBadTask(error, pending.length);
      if (bad === null || !(error instanceof DelayQError)) throw error;
      results[pending[bad]!] = itemError(error, pending[bad]!);
      pending = pending.filter((_, k) => k !== bad);
    }
  }
  return results.map((r) => r ?? errorBody('INTERNAL_ERROR', 'task was not processed'));
}

/** The position of the task a validation error is about, or null if it is not about one task. */
function indexOfBadTask(error: unknown, count: number): number | null {
  if (!(error instanceof DelayQError) || !isTaskError(error)) return null;
  if (count === 1) return 0;
  const index = error.details?.['index'];
  return typeof index === 'number' && Number.isInteger(index) && index >= 0 && index < count ? index : null;
}

function isTaskError(error: DelayQError): boolean {
  return error.code.startsWith('INVALID_') || error.code === 'PAYLOAD_TOO_LARGE' || error.code === 'PUSH_NO_SECRET';
}

/**
 * A store cut into partitions stored the tasks of those it could write: those answer as
 * stored, the others STORE_UNAVAILABLE each, for the caller to send again.
 */
function perItem(error: PartialBatchError<BatchItemResult>): BatchItemResult[] {
  return error.outcomes.map(
    (outcome, index) => outcome ?? errorBody('STORE_UNAVAILABLE', `tasks[${index}]: its partition of the store cannot take writes now; the other tasks were stored: send this one again`, { index }),
  );
}

function itemError(error: DelayQError, index: number): BatchItemResult {
  // The library prefixes "tasks[i]." only for batches; say where the task is either way.
  const message = error.message.startsWith('tasks[') ? error.message : `tasks[${index}].${error.message}`;
  return errorBody(error.code, message, { ...error.details, index });
}
