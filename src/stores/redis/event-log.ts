/**
 * The Redis store's lifecycle events' log (core/ports/events.ts): one stream, `keys.events`,
 * under a hash tag of its own (one slot of a Redis Cluster), capped with `XADD MAXLEN ~`
 * at about `retain` entries. Redis gives the ids (`<ms>-<seq>`), increasing in the order it
 * took the entries, so every process reads the same order. Each entry holds one field, `e`,
 * the event's JSON; what is read back is checked (decodeTaskEvent), and an entry that is not
 * an event is skipped and counted.
 */
import { decodeTaskEvent, encodeTaskEvent, type LoggedTaskEvent, type TaskEvent } from '../../core/events.js';
import type { TaskEventLog, TaskEventPage } from '../../core/ports/index.js';
import type { RedisClient } from './connection.js';
import { call } from './plain-commands.js';

const STREAM_ID = /^[0-9]{1,20}-[0-9]{1,20}$/;
const FIELD = 'e';

export class RedisEventLog implements TaskEventLog {
  constructor(
    private readonly client: RedisClient,
    private readonly key: string,
    readonly retain: number,
  ) {}

  async append(events: readonly TaskEvent[]): Promise<void> {
    if (events.length === 0) return;
    const pipeline = this.client.pipeline();
    for (const event of events) pipeline.xadd(this.key, 'MAXLEN', '~', this.retain, '*', FIELD, encodeTaskEvent(event));
    const replies = await call(() => pipeline.exec());
    for (const [error] of replies ?? []) if (error) throw error;
  }

  async read(after: string | null, limit: number): Promise<TaskEventPage> {
    const reply: unknown = await call(() => this.client.xrange(this.key, after === null ? '-' : `(${after}`, '+', 'COUNT', limit));
    const events: LoggedTaskEvent[] = [];
    let last = after;
    let invalid = 0;
    for (const entry of Array.isArray(reply) ? (reply as unknown[]) : []) {
      const [id, fields] = Array.isArray(entry) ? (entry as unknown[]) : [];
      if (typeof id !== 'string' || !STREAM_ID.test(id)) {
        invalid++;
        continue;
      }
      last = id;
      const event = Array.isArray(fields) && fields.length === 2 && fields[0] === FIELD ? decodeTaskEvent(fields[1]) : null;
      if (event === null) invalid++;
      else events.push({ ...event, eventId: id });
    }
    return { events, last, invalid };
  }

  async latest(): Promise<string | null> {
    const reply: unknown = await call(() => this.client.xrevrange(this.key, '+', '-', 'COUNT', 1));
    const [entry] = Array.isArray(reply) ? (reply as unknown[]) : [];
    const id: unknown = Array.isArray(entry) ? (entry as unknown[])[0] : undefined;
    return typeof id === 'string' && STREAM_ID.test(id) ? id : null;
  }

  parseId(id: string): string | null {
    return STREAM_ID.test(id) ? id : null;
  }
}
