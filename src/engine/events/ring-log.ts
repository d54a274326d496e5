/**
 * The events' log of a store one process owns (memory, SQLite): a ring of the latest
 * `retain` events in this process's memory, with ids counting up from 1. Lost on restart.
 */
import type { LoggedTaskEvent, TaskEvent } from '../../core/events.js';
import type { TaskEventLog, TaskEventPage } from '../../core/ports/index.js';

const ID = /^(0|[1-9][0-9]{0,15})$/;

export class RingEventLog implements TaskEventLog {
  private readonly ring: (LoggedTaskEvent | undefined)[];
  /** The id of the newest event (0: none yet). */
  private newest = 0;

  constructor(readonly retain: number) {
    this.ring = new Array<LoggedTaskEvent | undefined>(retain);
  }

  append(events: readonly TaskEvent[]): Promise<void> {
    for (const event of events) {
      this.newest++;
      this.ring[this.newest % this.retain] = { ...event, eventId: String(this.newest) };
    }
    return Promise.resolve();
  }

  read(after: string | null, limit: number): Promise<TaskEventPage> {
    const oldest = Math.max(1, this.newest - this.retain + 1);
    const from = Math.max(oldest, after === null ? 1 : Number(after) + 1);
    const to = Math.min(this.newest, from + limit - 1);
    const events: LoggedTaskEvent[] = [];
    for (let n = from; n <= to; n++) events.push(this.ring[n % this.retain]!);
    return Promise.resolve({ events, last: to >= from ? String(to) : after, invalid: 0, more: to < this.newest });
  }

  latest(): Promise<string | null> {
    return Promise.resolve(this.newest === 0 ? null : String(this.newest));
  }

  parseId(id: string): string | null {
    return ID.test(id) ? id : null;
  }
}
