import type { QueueObserver } from '../core/observer.js';
import type { EngineTuning } from '../core/options.js';
import type { Clock, Logger, TaskStore } from '../core/ports/index.js';
import type { EventSink } from './events/task-events.js';
import type { InFlight } from './in-flight.js';

/**
 * What every part of the engine shares, built once by the facade and handed to each loop
 * first: `new Loader(context, { place, backlog })`. A loop names the fields it reads in its
 * parameter type (`Pick<LoopContext, ...>`), and what is its own alone comes second, by name.
 */
export interface LoopContext {
  readonly store: TaskStore;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Told of every task scheduled, delivered and settled (metrics); given at construction, never later. */
  readonly observer: QueueObserver;
  /** The engine's numbers, checked (core/options.ts). */
  readonly tuning: EngineTuning;
  /** The store calls close() waits for. */
  readonly inFlight: InFlight;
  /** Where the parts emit lifecycle events once a change settled in the store (events/task-events.ts). */
  readonly events: EventSink;
}
