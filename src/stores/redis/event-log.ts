/**
 * The Redis store's lifecycle events' log (core/ports/events.ts): one stream, `keys.events`,
 * under a hash tag of its own (one slot of a Redis Cluster), with a count of the events it
 * holds beside it (`keys.eventsCount`, the same slot). Each entry is one batch the
 * publisher wrote: `n` events, and `e` their JSON array, so a write is one XADD however
 * many events it carries (lua/events-append.lua, which also trims the oldest entries while
 * the newest `retain` events stay). An event's id is its entry's id and its index in it,
 * `<ms>-<seq>-<index>`, increasing in the order Redis took the entries, so every process
 * reads the same order. What is read back is checked (decodeTaskEvent): an entry or an
 * event that is not delayq's is skipped and counted.
 */
import { decodeTaskEvent, encodeTaskEvent, type LoggedTaskEvent, type TaskEvent } from '../../core/events.js';
import type { TaskEventLog, TaskEventPage } from '../../core/ports/index.js';
import type { RedisClient } from './connection.js';
import { call } from './plain-commands.js';
import { run } from './script-runner.js';

const EVENT_ID = /^([0-9]{1,20}-[0-9]{1,20})-([0-9]{1,5})$/;
const ENTRY_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
/** Entries one read takes: each holds a batch (up to the publisher's 500 events). */
const ENTRIES_PER_READ = 8;
/** The most events an entry may hold, and the longest JSON it may have: more is not delayq's. */
const MAX_ENTRY_EVENTS = 10_000;
const MAX_ENTRY_JSON = 4 * 1024 * 1024;
/** The index that stands for "the whole entry" (one that is not a batch of ours is passed whole). */
const WHOLE = MAX_ENTRY_EVENTS;

export class RedisEventLog implements TaskEventLog {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: { readonly events: string; readonly eventsCount: string },
    readonly retain: number,
  ) {}

  async append(events: readonly TaskEvent[]): Promise<void> {
    if (events.length === 0) return;
    const json = `[${events.map(encodeTaskEvent).join(',')}]`;
    await run(this.client, 'events-append', [this.keys.events, this.keys.eventsCount], [events.length, json, this.retain]);
  }

  async read(after: string | null, limit: number): Promise<TaskEventPage> {
    const from = after === null ? null : EVENT_ID.exec(after);
    const startEntry = from?.[1] ?? '-';
    const skipThrough = from === null || from === undefined ? -1 : Number(from[2]);
    const reply: unknown = await call(() => this.client.xrange(this.keys.events, startEntry, '+', 'COUNT', ENTRIES_PER_READ));
    const entries = Array.isArray(reply) ? (reply as unknown[]) : [];
    const events: LoggedTaskEvent[] = [];
    let last = after;
    let invalid = 0;
    let full = false;
    for (const entry of entries) {
      const [id, fields] = Array.isArray(entry) ? (entry as unknown[]) : [];
      if (typeof id !== 'string' || !ENTRY_ID.test(id)) {
        invalid++;
        continue;
      }
      const skip = id === startEntry ? skipThrough : -1;
      const batch = batchOf(fields);
      if (batch === null) {
        if (skip < WHOLE) invalid++;
        last = `${id}-${WHOLE}`;
        continue;
      }
      for (let i = skip + 1; i < batch.length; i++) {
        if (events.length >= limit) {
          full = true;
          break;
        }
        const event = decodeTaskEvent(batch[i]);
        last = `${id}-${i}`;
        if (event === null) invalid++;
        else events.push({ ...event, eventId: last });
      }
      if (full) break;
    }
    return { events, last, invalid, more: full || entries.length >= ENTRIES_PER_READ };
  }

  async latest(): Promise<string | null> {
    const reply: unknown = await call(() => this.client.xrevrange(this.keys.events, '+', '-', 'COUNT', 1));
    const [entry] = Array.isArray(reply) ? (reply as unknown[]) : [];
    const [id, fields] = Array.isArray(entry) ? (entry as unknown[]) : [];
    if (typeof id !== 'string' || !ENTRY_ID.test(id)) return null;
    const batch = batchOf(fields);
    return batch === null || batch.length === 0 ? `${id}-${WHOLE}` : `${id}-${batch.length - 1}`;
  }

  parseId(id: string): string | null {
    const match = EVENT_ID.exec(id);
    return match !== null && Number(match[2]) <= WHOLE ? id : null;
  }
}

/** An entry's events, not yet checked one by one, or null for an entry that is not a batch of ours. */
function batchOf(fields: unknown): unknown[] | null {
  if (!Array.isArray(fields)) return null;
  const list = fields as unknown[];
  let json: unknown;
  for (let i = 0; i + 1 < list.length; i += 2) if (list[i] === 'e') json = list[i + 1];
  if (typeof json !== 'string' || json.length > MAX_ENTRY_JSON) return null;
  let batch: unknown;
  try {
    batch = JSON.parse(json);
  } catch {
    return null;
  }
  return Array.isArray(batch) && batch.length <= MAX_ENTRY_EVENTS ? (batch as unknown[]) : null;
}
