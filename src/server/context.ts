import type { EngineQueue } from '../engine/engine-queue.js';
import type { QueueMetrics } from '../metrics/prometheus.js';
import type { ServerLimits } from './limits.js';

/** What every route plugin is given: the queue, the limits, and the server's drain signal. */
export interface RouteContext {
  readonly queue: EngineQueue;
  readonly limits: ServerLimits;
  /** Aborts when the server starts closing: long-polls answer with what they have. */
  readonly draining: AbortSignal;
  /** The queue's metrics (GET /metrics), when it has them. */
  readonly metrics: QueueMetrics | null;
}
