/**
 * Writes the engine's lifecycle events to the log, after the change they tell of settled in
 * the store and never in its way: `emit` only appends to a bounded buffer, and the buffer
 * goes to the log in batches, one append at a time, a turn later. A full buffer drops the
 * event, and a failed append its batch: both counted (`dropped`), neither retried. So the
 * promise is at most once: an event is written once or lost (a crash loses the buffer).
 */
import type { EventDropReason, TaskEvent } from '../../core/events.js';
import type { Logger, TaskEventLog } from '../../core/ports/index.js';
import type { InFlight } from '../in-flight.js';

export interface EventPublisherParams {
  readonly log: TaskEventLog;
  readonly logger: Logger;
  readonly inFlight: InFlight;
  /** The most events waiting for the log; more are dropped. */
  readonly maxBuffered: number;
  /** The most events one append writes. */
  readonly batch: number;
  readonly dropped: (reason: EventDropReason, count: number) => void;
  /** An append went through: readers in this process may look now. */
  readonly appended: () => void;
}

export class EventPublisher {
  private buffer: TaskEvent[] = [];
  private appending: Promise<void> | null = null;
  private scheduled = false;

  constructor(private readonly params: EventPublisherParams) {}

  emit(event: TaskEvent): void {
    if (this.buffer.length >= this.params.maxBuffered) {
      this.params.dropped('overflow', 1);
      return;
    }
    this.buffer.push(event);
    if (!this.scheduled && this.appending === null) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }

  /** Resolves once every event emitted so far was written or dropped (close() waits for it). */
  async drain(): Promise<void> {
    while (this.appending !== null || this.buffer.length > 0) {
      if (this.appending === null) this.flush();
      await this.appending;
    }
  }

  private readonly flush = (): void => {
    this.scheduled = false;
    if (this.appending !== null || this.buffer.length === 0) return;
    const { log, batch: max, logger, inFlight, dropped, appended } = this.params;
    const batch = this.buffer.length <= max ? this.buffer : this.buffer.slice(0, max);
    this.buffer = this.buffer.length <= max ? [] : this.buffer.slice(max);
    this.appending = inFlight
      .track(log.append(batch))
      .then(appended, (error: unknown) => {
        dropped('store', batch.length);
        logger.warn({ err: error, count: batch.length }, 'writing lifecycle events failed; they are dropped');
      })
      .finally(() => {
        this.appending = null;
        if (this.buffer.length > 0) this.flush();
      });
  };
}
