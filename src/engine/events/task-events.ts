/**
 * The queue's lifecycle events (issue 49, docs/library.md "Lifecycle events"): what the
 * engine's parts emit once a change settled in the store (`emit`), written to the store's
 * log by the publisher, and read back for this process's subscribers by the feed. The log
 * is the store's own (`TaskStore.eventLog`: Redis, PostgreSQL, shared by every process) or
 * a ring in this process's memory (memory, SQLite).
 *
 * Off unless the queue was opened with `events: true`: then `emit` does nothing at all.
 */
import { DelayQError } from '../../core/errors.js';
import { parseTaskEventFilter, type EventDropReason, type LoggedTaskEvent, type TaskEvent } from '../../core/events.js';
import type { Clock, Logger, TaskEventLog, TaskStore } from '../../core/ports/index.js';
import type { InFlight } from '../in-flight.js';
import { EventFeed } from './event-feed.js';
import { EventPublisher } from './event-publisher.js';
import { RingEventLog } from './ring-log.js';

/** Events the ring of a store one process owns keeps. */
export const RING_RETAIN = 10_000;
/** Events waiting to be written, at most: more are dropped (and counted). */
const MAX_BUFFERED = 20_000;
/** Events one append writes, at most. */
const APPEND_BATCH = 5_000;
/** How often subscribers' reads look at the log for other processes' events. */
export const EVENT_POLL_MS = 250;
const READ_LIMIT = 500;
/** Events a subscriber's buffer holds before the feed waits for it. */
const SUBSCRIBER_BUFFER = 1_000;

export interface EventsOptions {
  /** Whether events are written at all. */
  readonly enabled: boolean;
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly inFlight: InFlight;
  readonly dropped: (reason: EventDropReason, count: number) => void;
}

/** What the engine's parts emit into. */
export interface EventSink {
  emit(event: TaskEvent): void;
}

export interface EventSubscription {
  readonly topic?: string | null | undefined;
  /** Event types, a list or a comma-separated string; absent: every type. */
  readonly types?: readonly string[] | string | null | undefined;
  /** Resume after this event id (`eventId`, an SSE Last-Event-ID); absent: only events from now on. */
  readonly after?: string | null | undefined;
  /** Ends the iteration. */
  readonly signal?: AbortSignal | undefined;
}

export class TaskEvents implements EventSink {
  readonly log: TaskEventLog | null;
  private readonly publisher: EventPublisher | null;
  private readonly feed: EventFeed | null;

  constructor({ enabled, store, clock, logger, inFlight, dropped }: EventsOptions) {
    if (!enabled) {
      this.log = null;
      this.publisher = null;
      this.feed = null;
      return;
    }
    // The ring's epoch from the clock: ids a reader kept from before a restart are not this ring's.
    const log = store.eventLog ?? new RingEventLog(RING_RETAIN, clock.now());
    this.log = log;
    this.feed = new EventFeed({ log, clock, logger, pollMs: EVENT_POLL_MS, readLimit: READ_LIMIT, maxBuffered: SUBSCRIBER_BUFFER, dropped });
    const feed = this.feed;
    this.publisher = new EventPublisher({ log, logger, inFlight, maxBuffered: MAX_BUFFERED, batch: APPEND_BATCH, dropped, appended: () => feed.wake() });
  }

  get enabled(): boolean {
    return this.publisher !== null;
  }

  emit(event: TaskEvent): void {
    this.publisher?.emit(event);
  }

  /** The events from now on (or after `after`) that match, as an async iterable; INVALID_ARGUMENT for a bad filter or id. */
  subscribe(options: EventSubscription, maxTopicLength: number): AsyncIterableIterator<LoggedTaskEvent> {
    if (this.feed === null || this.log === null) throw new DelayQError('INVALID_OPTION', 'events: lifecycle events are off; open the queue with `events: true` (delayq serve --events)', { field: 'events' });
    const filter = parseTaskEventFilter(options, maxTopicLength);
    let after: string | null | undefined;
    if (options.after !== undefined && options.after !== null) {
      after = typeof options.after === 'string' ? this.log.parseId(options.after) : null;
      if (after === null) throw new DelayQError('INVALID_ARGUMENT', 'after: not an event id of this store', { field: 'after' });
    }
    return this.feed.subscribe(filter, after, options.signal);
  }

  /** How many subscribers this process has. */
  get subscribers(): number {
    return this.feed?.size ?? 0;
  }

  /** Writes what is buffered (close() waits for it before the store closes). */
  async drain(): Promise<void> {
    await this.publisher?.drain();
  }

  /** Ends every subscriber. */
  stop(): void {
    this.feed?.stop();
  }
}

/** Emits nothing (queues built without events, and tests of single parts). */
export const NO_EVENTS: EventSink = { emit: () => undefined };
