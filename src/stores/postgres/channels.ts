/**
 * The notification channels of a schema (LISTEN / NOTIFY), named after it so that queues
 * in different schemas of one database do not hear each other. PostgreSQL delivers a
 * notification only when the transaction that sent it commits, and to every session
 * listening then; a payload is at most 8,000 bytes, so longer messages go as several.
 *
 *   delayq:<schema>:timers   "id lane dueAt seq" lines: timers for the owner of their shard
 *   delayq:<schema>:ready    "lane dueAt seq": due tasks of the lane may be reserved, the
 *                            earliest promoted at that position (wakes long-polls, and
 *                            moves the lane's cursor back: ready-reserver.ts)
 *   delayq:<schema>:probe    "owner nonce": a process's own notice, sent through its pool, by
 *                            which its LISTEN connection finds whether notices reach it
 *                            (listener.ts)
 */
export interface Channels {
  readonly timers: string;
  readonly ready: string;
  readonly probe: string;
}

export function channelsOf(schema: string): Channels {
  return { timers: `delayq:${schema}:timers`, ready: `delayq:${schema}:ready`, probe: `delayq:${schema}:probe` };
}

/** Lines packed into payloads under PostgreSQL's 8,000-byte limit. */
export const MAX_PAYLOAD = 7_900;

export function packLines(lines: readonly string[]): string[] {
  const payloads: string[] = [];
  let current = '';
  for (const line of lines) {
    if (current.length > 0 && current.length + 1 + line.length > MAX_PAYLOAD) {
      payloads.push(current);
      current = '';
    }
    current = current.length === 0 ? line : `${current}\n${line}`;
  }
  if (current.length > 0) payloads.push(current);
  return payloads;
}
