/**
 * The typed wrappers of the recurring-schedule scripts: each write bumps the
 * schedulesVersion counter with it (ADR 0033); chunks of MAX_SCRIPT_BATCH, sent at once.
 */
import type { RedisClient } from './connection.js';
import { chunked, run, str } from './script-runner.js';

type ScheduleKeys = { readonly schedules: string; readonly schedulesVersion: string };

/** RecurringScheduleStore.putSchedules: each (id, text) stored, replacing any; one version bump per chunk. */
export async function putSchedulesScript(client: RedisClient, keys: ScheduleKeys, records: readonly (readonly [id: string, text: string])[]): Promise<void> {
  await Promise.all(chunked(records).map((chunk) => run(client, 'schedule-put', [keys.schedules, keys.schedulesVersion], chunk.flat())));
}

/** RecurringScheduleStore.deleteSchedule: true if there was one. */
export async function deleteScheduleScript(client: RedisClient, keys: ScheduleKeys, id: string): Promise<boolean> {
  return Number(await run(client, 'schedule-delete', [keys.schedules, keys.schedulesVersion], [id])) === 1;
}

/** RecurringScheduleStore.putNewSchedules: each (id, text) stored unless the id has one; '' if stored, else the stored text. */
export async function putNewSchedulesScript(
  client: RedisClient,
  keys: ScheduleKeys,
  records: readonly (readonly [id: string, text: string])[],
): Promise<string[]> {
  // Every chunk sent at once: Redis runs the first while the next is encoded.
  const replies = await Promise.all(
    chunked(records).map((chunk) => run(client, 'schedule-put-new', [keys.schedules, keys.schedulesVersion], chunk.flat())),
  );
  return replies.flatMap((reply) => (reply as unknown[]).map(String));
}

/**
 * RecurringScheduleStore.swapSchedules: each (id, expected text, next text) replaced only if still
 * expected; `versionKey` is bumped when `changesDefinitions` and any of them was replaced.
 */
export async function swapScheduleScript(
  client: RedisClient,
  keys: ScheduleKeys,
  changesDefinitions: boolean,
  swaps: readonly (readonly [id: string, expected: string, next: string])[],
): Promise<boolean[]> {
  const replies = await Promise.all(
    chunked(swaps).map((chunk) => run(client, 'schedule-swap', [keys.schedules, keys.schedulesVersion], [changesDefinitions ? '1' : '0', ...chunk.flat()])),
  );
  // One character per triple of its chunk: '1' replaced.
  return replies.flatMap((reply) => [...str(reply)].map((c) => c === '1'));
}
