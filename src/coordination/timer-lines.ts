/**
 * The line format of run timers handed to the owner of their shard (Redis pub/sub, PostgreSQL
 * NOTIFY; the SQL function `schedule` writes the same): "id lane dueAt seq", one per line.
 * Ids and lanes hold no space or newline (the validators' alphabet, and '~push:' before a topic).
 * A receiver reads them with parseTimerNotice (notices.ts), as untrusted input.
 */
import type { TimerRef } from '../core/task/model.js';

export function timerLine(ref: TimerRef): string {
  return `${ref.id} ${ref.topic} ${ref.dueAt} ${ref.seq}`;
}
