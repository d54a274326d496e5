/**
 * The line format of run timers handed to the owner of their shard (Redis pub/sub, PostgreSQL
 * NOTIFY; the SQL function `schedule` writes the same): "id lane dueAt seq", one per line.
 * Ids and lanes hold no space or newline (the validators' alphabet, and '~push:' before a topic).
 */
import type { TimerRef } from '../../core/task/model.js';

export function timerLine(ref: TimerRef): string {
  return `${ref.id} ${ref.topic} ${ref.dueAt} ${ref.seq}`;
}

/** The run refs of a message's lines that `keep` (by id and due time) accepts; malformed lines are skipped. */
export function parseTimerLines(message: string, keep: (id: string, dueAt: number) => boolean): TimerRef[] {
  const refs: TimerRef[] = [];
  for (const line of message.split('\n')) {
    const [id, topic, dueAt, seq] = line.split(' ');
    if (id === undefined || topic === undefined) continue;
    const due = Number(dueAt);
    if (keep(id, due)) refs.push({ id, topic, kind: 'run', dueAt: due, seq: Number(seq), receipt: null });
  }
  return refs;
}
