/** GET /v1/events (docs/service.md, "Lifecycle events"): one Server-Sent Event's data, with its id. */

export type TaskEventTypeName = 'scheduled' | 'delivered' | 'acked' | 'failed' | 'dead' | 'cancelled' | 'rescheduled';

export interface TaskEventView {
  /** The event's id in the store's log (the SSE `id:`): resume after it. */
  eventId: string;
  type: TaskEventTypeName;
  /** The task's id. */
  id: string;
  topic: string;
  /** The delivery's attempt (delivered, acked, failed, dead); 0 for scheduled; null where the store does not say. */
  attempt: number | null;
  /** When it happened, ms since the epoch. */
  at: number;
  /** scheduled, rescheduled: the task's (new) runAt. */
  runAt?: number;
  /** failed: when the next attempt is due. */
  nextRunAt?: number;
  /** failed, dead: the attempt's error. */
  error?: string;
}
