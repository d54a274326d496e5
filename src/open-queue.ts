/**
 * The composition root of a queue: the one place that knows both the engine and the
 * stores. The engine (src/engine) depends on the store port only (src/core/ports/; `npm
 * run boundaries` keeps it so) and starts over a store already open (`DelayQueue.start`).
 * This DelayQueue, the one the package exports, adds what needs the stores: `open`, which
 * opens the store a URL names (src/stores/open-store.ts, each kind loaded on demand) and
 * hands it the queue's logger and clock, then starts the engine over it.
 *
 * A subclass rather than an opener injected into the engine: `DelayQueue.open(...)` keeps
 * working exactly as before for every caller, and the engine has no hook that a process
 * must remember to fill before it can open a queue.
 */
import { MAX_PUSH_IN_FLIGHT } from './core/options.js';
import type { TaskStore } from './core/ports/index.js';
import { validateIntOption } from './core/task/validate.js';
import { EngineQueue } from './engine/engine-queue.js';
import type { EngineOptions } from './engine/queue-types.js';
import type { MetricsOptions, QueueMetrics } from './metrics/prometheus.js';
import { resolvePushPorts, type PushOptions } from './push-wiring.js';
import { openStore, type StoreOptions } from './stores/open-store.js';

export interface DelayQueueOptions extends Omit<EngineOptions, 'push' | 'pushMaxInFlight'> {
  /**
   * Push delivery (docs/push.md): the transport and signer default to src/push's (undici
   * with the SSRF guard, Standard Webhooks signing); `allow` lists what the guard lets
   * through (local receivers); `maxInFlight` bounds the pushes in flight.
   */
  push?: PushOptions;
  /**
   * Where tasks live: 'memory' (the default), 'sqlite:./path/file.db', 'redis://host:port',
   * 'redis+cluster://host:port,host:port', or a TaskStore instance.
   */
  store?: string | TaskStore;
  /**
   * Options for the store named by a `store` URL. Its `logger` defaults to the queue's own.
   * Its `clock` (the store's background work: commits, checkpoints, lease ticks, sweeps) is
   * the system clock unless given here, even when the queue has a `clock` of its own: that
   * work paces I/O, and on a ManualClock a SQLite store's first commit would wait for an
   * `advance` that a test awaiting `schedule()` never makes.
   */
  storeOptions?: StoreOptions;
  /**
   * Prometheus metrics (docs/metrics.md) on the prom-client Registry given: counters by
   * topic, the lateness histogram, store and push durations, gauges read at scrape time.
   */
  metrics?: MetricsOptions;
}

export class DelayQueue extends EngineQueue {
  /**
   * The queue's metrics, when opened with `metrics`: built before the queue, they observe it
   * from its construction (the engine's observer) and their gauges read it from then on.
   */
  readonly metrics: QueueMetrics | null;

  protected constructor(store: TaskStore, options: EngineOptions, metrics: QueueMetrics | null) {
    super(store, metrics === null ? options : { ...options, observer: metrics });
    this.metrics = metrics;
    metrics?.registerGauges(this);
  }

  /** Opens (or creates) the store and starts the engine over it. */
  static async open(options: DelayQueueOptions = {}): Promise<DelayQueue> {
    // prom-client loads only for a queue that asks for metrics.
    const metrics = options.metrics ? new (await import('./metrics/prometheus.js')).QueueMetrics(options.metrics) : null;
    const spec = options.store ?? 'memory';
    const engineOptions = withPushPorts(options, metrics);
    const start = (store: TaskStore): DelayQueue => new DelayQueue(metrics === null ? store : metrics.wrapStore(store), engineOptions, metrics).startLoops();
    if (typeof spec !== 'string') {
      let given: DelayQueue;
      try {
        given = start(spec);
      } catch (error) {
        await engineOptions.push?.transport.close();
        throw error;
      }
      await given.readPausedTopics().catch(async (error: unknown) => {
        await given.close();
        throw error;
      });
      return given;
    }
    const storeOptions = options.storeOptions ?? {};
    const logger = storeOptions.logger ?? options.logger;
    let store: TaskStore;
    try {
      store = await openStore(spec, { ...storeOptions, ...(logger ? { logger } : {}) });
    } catch (error) {
      await engineOptions.push?.transport.close();
      throw error;
    }
    let queue: DelayQueue;
    try {
      queue = start(store);
    } catch (error) {
      // Bad engine options: the store opened for this queue must not stay open.
      await store.close();
      await engineOptions.push?.transport.close();
      throw error;
    }
    try {
      await queue.readPausedTopics();
    } catch (error) {
      await queue.close();
      throw error;
    }
    return queue;
  }

  /** Starts the engine over a store already open, which close() will close. */
  static override start(store: TaskStore, options: EngineOptions = {}): DelayQueue {
    return new DelayQueue(store, options, null).startLoops();
  }
}

function withPushPorts(options: DelayQueueOptions, metrics: QueueMetrics | null): EngineOptions {
  const { push, metrics: _metrics, ...rest } = options;
  const ports = resolvePushPorts(push, options.logger, options.clock);
  // The engine bounds the pushes in flight; the number is checked here, under the name the caller gave it.
  const engine: EngineOptions = push?.maxInFlight === undefined ? rest : { ...rest, pushMaxInFlight: validateIntOption(push.maxInFlight, 'push.maxInFlight', 1, MAX_PUSH_IN_FLIGHT) };
  if (metrics === null) return { ...engine, push: ports };
  const clock = options.clock;
  const transport = metrics.wrapTransport(ports.transport, clock ? () => clock.now() : Date.now);
  return { ...engine, push: { ...ports, transport } };
}
