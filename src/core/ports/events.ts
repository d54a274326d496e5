import type { LoggedTaskEvent, TaskEvent } from '../events.js';

/**
 * A log of lifecycle events that every process sharing a store writes to and reads from
 * (Redis: a capped stream; PostgreSQL: a table trimmed to a bound). It gives each event an
 * id, increasing in the order the log took them, to resume after. A store one process owns
 * (memory, SQLite) has none: the engine keeps its events in a ring of its own.
 *
 * The log is bounded: it keeps the latest `retain` events (about, for Redis's trimming),
 * so a reader that falls further behind loses the oldest.
 */
export interface TaskEventLog {
  /** How many events the log keeps (the retention, documented per store). */
  readonly retain: number;
  /** Appends events in order; resolves once the log holds them. */
  append(events: readonly TaskEvent[]): Promise<void>;
  /**
   * Up to `limit` events after the id `after` (null: from the oldest kept), oldest first.
   * Entries that are not events delayq wrote are left out and counted in `invalid`; `last`
   * is the id of the last entry read, kept or not (null if none), where the next read starts.
   */
  read(after: string | null, limit: number): Promise<TaskEventPage>;
  /** The id of the newest event, or null for an empty log: where a reader that wants only new events starts. */
  latest(): Promise<string | null>;
  /** The id as this log writes them, or null for anything else (a Last-Event-ID from outside). */
  parseId(id: string): string | null;
}

export interface TaskEventPage {
  readonly events: readonly LoggedTaskEvent[];
  readonly last: string | null;
  readonly invalid: number;
  /** Whether the log may hold more after `last` now (the read stopped at its limit): read again at once. */
  readonly more: boolean;
}
