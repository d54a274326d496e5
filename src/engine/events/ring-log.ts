/**
 * The events' log of a store one process owns (memory, SQLite): a ring of the latest
 * `retain` events in this process's memory, lost on restart. Ids are `<epoch>-<n>`: `n`
 * counts up from 1, and `epoch` names this ring (when it was made), so an id kept from
 * before a restart is not taken for one of this ring's: a reader resuming after it starts at
 * the oldest event kept.
 */
import type { LoggedTaskEvent, TaskEvent } from '../../core/events.js';
import type { TaskEventLog, TaskEventPage } from '../../core/ports/index.js';

const ID = /^([0-9]{1,16})-([0-9]{1,16})$/;

export class RingEventLog implements TaskEventLog {
  private readonly ring: (LoggedTaskEvent | undefined)[];
  /** The number of the newest event (0: none yet). */
  private newest = 0;
  private readonly epoch: string;

  constructor(
    readonly retain: number,
    epoch: number,
  ) {
    this.ring = new Array<LoggedTaskEvent | undefined>(retain);
    this.epoch = String(Math.max(0, Math.floor(epoch)));
  }

  append(events: readonly TaskEvent[]): Promise<void> {
    for (const event of events) {
      this.newest++;
      this.ring[this.newest % this.retain] = { ...event, eventId: `${this.epoch}-${this.newest}` };
    }
    return Promise.resolve();
  }

  read(after: string | null, limit: number): Promise<TaskEventPage> {
    const oldest = Math.max(1, this.newest - this.retain + 1);
    const match = after === null ? null : ID.exec(after);
    const afterN = match !== null && match[1] === this.epoch ? Number(match[2]) : 0;
    const from = Math.max(oldest, afterN + 1);
    const to = Math.min(this.newest, from + limit - 1);
    const events: LoggedTaskEvent[] = [];
    for (let n = from; n <= to; n++) events.push(this.ring[n % this.retain]!);
    return Promise.resolve({ events, last: to >= from ? `${this.epoch}-${to}` : after, invalid: 0, more: to < this.newest });
  }

  latest(): Promise<string | null> {
    return Promise.resolve(this.newest === 0 ? null : `${this.epoch}-${this.newest}`);
  }

  parseId(id: string): string | null {
    return ID.test(id) ? id : null;
  }
}
