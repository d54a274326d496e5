/**
 * The PostgreSQL store's lifecycle events' log (core/ports/events.ts): the table
 * `task_events` (migration 0015), its bigserial `id` the event's id. Appends take one
 * advisory lock (events-append.sql), so ids follow commit order and a reader going by
 * `id > last` misses no row committed later with a lower id. Every TRIM_EVERY appends, the
 * appending process deletes the rows older than the newest `retain`. Readers poll (the
 * engine's feed); what they read is checked (decodeTaskEvent), and a row that is not an
 * event is skipped and counted.
 */
import { decodeTaskEvent, encodeTaskEvent, type LoggedTaskEvent, type TaskEvent } from '../../core/events.js';
import type { TaskEventLog, TaskEventPage } from '../../core/ports/index.js';
import type { PgContext } from './context.js';

const ROW_ID = /^[1-9][0-9]{0,18}$/;
/** Appends between two trims. */
const TRIM_EVERY = 64;

export class PgEventLog implements TaskEventLog {
  private appends = 0;

  constructor(
    private readonly pg: PgContext,
    readonly retain: number,
  ) {}

  async append(events: readonly TaskEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.pg.query(this.pg.sql('events-append'), [events.map(encodeTaskEvent)]);
    if (++this.appends % TRIM_EVERY === 0) await this.pg.query(this.pg.sql('events-trim'), [this.retain]);
  }

  async read(after: string | null, limit: number): Promise<TaskEventPage> {
    const rows = await this.pg.query<{ event_id: unknown; event: unknown }>(this.pg.sql('events-read'), [after ?? '0', limit]);
    const events: LoggedTaskEvent[] = [];
    let last = after;
    let invalid = 0;
    for (const row of rows) {
      const id = row.event_id;
      if (typeof id !== 'string' || !ROW_ID.test(id)) {
        invalid++;
        continue;
      }
      last = id;
      const event = decodeTaskEvent(row.event);
      if (event === null || typeof row.event !== 'string') invalid++;
      else events.push({ ...event, eventId: id });
    }
    return { events, last, invalid, more: rows.length >= limit };
  }

  async latest(): Promise<string | null> {
    const rows = await this.pg.query<{ id: unknown }>(this.pg.sql('events-latest'), []);
    const id = rows[0]?.id;
    return typeof id === 'string' && ROW_ID.test(id) ? id : null;
  }

  parseId(id: string): string | null {
    return ROW_ID.test(id) ? id : null;
  }
}
