/**
 * Hands the log's events to this process's subscribers (`DelayQueue.events`, the SSE
 * route): while any subscriber is open it reads the log every `pollMs` (at once after an
 * append of this process), one read per distinct position, so every subscriber that is
 * caught up shares one read. Each subscriber has a bounded buffer: one whose buffer is
 * full is not read for until it takes some (a slow reader slows only itself, and falls
 * behind in the log, whose retention bounds how far).
 */
import { matchesTaskEventFilter, type EventDropReason, type LoggedTaskEvent, type TaskEventFilter } from '../../core/events.js';
import type { Clock, Logger, TaskEventLog, TimerToken } from '../../core/ports/index.js';

export interface EventFeedParams {
  readonly log: TaskEventLog;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly pollMs: number;
  /** The most events one read takes. */
  readonly readLimit: number;
  /** The most events a subscriber's buffer holds before the feed stops reading for it. */
  readonly maxBuffered: number;
  readonly dropped: (reason: EventDropReason, count: number) => void;
}

/** Where a subscriber reads next: after an id, from the oldest kept (null), or from the newest when it is first read (undefined). */
type Cursor = string | null | undefined;

class Subscriber implements AsyncIterableIterator<LoggedTaskEvent> {
  readonly buffer: LoggedTaskEvent[] = [];
  closed = false;
  private waiting: ((result: IteratorResult<LoggedTaskEvent>) => void) | null = null;

  constructor(
    readonly filter: TaskEventFilter,
    public cursor: Cursor,
    private readonly leave: (s: Subscriber) => void,
    /** Told the buffer's length after a take. */
    private readonly onTaken: (left: number) => void,
  ) {}

  push(event: LoggedTaskEvent): void {
    if (this.waiting !== null) {
      const resolve = this.waiting;
      this.waiting = null;
      resolve({ value: event, done: false });
    } else this.buffer.push(event);
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.leave(this);
    if (this.waiting !== null) this.waiting({ value: undefined, done: true });
    this.waiting = null;
  }

  next(): Promise<IteratorResult<LoggedTaskEvent>> {
    const event = this.buffer.shift();
    if (event !== undefined) {
      this.onTaken(this.buffer.length);
      return Promise.resolve({ value: event, done: false });
    }
    if (this.closed) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => {
      this.waiting = resolve;
    });
  }

  return(): Promise<IteratorResult<LoggedTaskEvent>> {
    this.end();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}

export class EventFeed {
  private readonly subscribers = new Set<Subscriber>();
  private timer: TimerToken | null = null;
  private reading = false;
  private again = false;
  private stopped = false;

  constructor(private readonly params: EventFeedParams) {}

  get size(): number {
    return this.subscribers.size;
  }

  subscribe(filter: TaskEventFilter, after: string | null | undefined, signal?: AbortSignal): AsyncIterableIterator<LoggedTaskEvent> {
    // A subscriber whose full buffer held reading back is read for again once it took one.
    const madeRoom = (left: number): void => void (left === this.params.maxBuffered - 1 && this.wake());
    const subscriber = new Subscriber(filter, after, (s) => this.subscribers.delete(s), madeRoom);
    if (this.stopped || signal?.aborted === true) {
      subscriber.closed = true;
      return subscriber;
    }
    this.subscribers.add(subscriber);
    signal?.addEventListener('abort', () => subscriber.end(), { once: true });
    this.wake();
    return subscriber;
  }

  /** Reads now (an append of this process went through, or a subscriber made room). */
  readonly wake = (): void => {
    if (this.subscribers.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.round();
  };

  /** Ends every subscriber; nothing more is read. */
  stop(): void {
    this.stopped = true;
    if (this.timer !== null) this.params.clock.clearTimer(this.timer);
    this.timer = null;
    for (const s of [...this.subscribers]) s.end();
  }

  private async round(): Promise<void> {
    const { log, readLimit, maxBuffered, logger, dropped } = this.params;
    this.reading = true;
    this.again = false;
    try {
      for (const s of this.subscribers) if (s.cursor === undefined) s.cursor = await log.latest();
      // One read per position, for the subscribers with room.
      const groups = new Map<string | null, Subscriber[]>();
      for (const s of this.subscribers) {
        if (s.buffer.length >= maxBuffered || s.cursor === undefined) continue;
        const group = groups.get(s.cursor);
        if (group === undefined) groups.set(s.cursor, [s]);
        else group.push(s);
      }
      for (const [cursor, group] of groups) {
        const page = await log.read(cursor, readLimit);
        if (page.invalid > 0) dropped('invalid', page.invalid);
        for (const s of group) {
          if (s.closed) continue;
          for (const event of page.events) if (matchesTaskEventFilter(event, s.filter)) s.push(event);
          s.cursor = page.last;
        }
        if (page.more) this.again = true;
      }
    } catch (error) {
      if (!this.stopped) logger.warn({ err: error }, 'reading lifecycle events failed; will retry');
      this.again = false;
    } finally {
      this.reading = false;
    }
    if (this.stopped || this.subscribers.size === 0) return;
    if (this.again) {
      setImmediate(this.wake);
      return;
    }
    if (this.timer === null) {
      this.timer = this.params.clock.setTimer(() => {
        this.timer = null;
        this.wake();
      }, this.params.pollMs);
    }
  }
}
