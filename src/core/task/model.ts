/** The task as every layer sees it. Times are epoch milliseconds. */
import { traceHeaders } from '../trace-context.js';
import type { AttemptEntry } from './history.js';

export const TASK_STATES = ['pending', 'reserved', 'completed', 'dead', 'cancelled'] as const;
export type TaskState = (typeof TASK_STATES)[number];

export interface BackoffPolicy {
  /** Delay before the first retry. */
  readonly baseMs: number;
  /** Each further retry waits `factor` times longer. */
  readonly factor: number;
  /** Upper bound of one retry delay. */
  readonly maxMs: number;
  /** 0..1: the share of the delay that is randomised (full jitter at 1), so retries spread. */
  readonly jitter: number;
}

/** A task as stored: what every store keeps for every task. */
export interface TaskRecord {
  readonly id: string;
  readonly topic: string;
  /** The payload as JSON text (stores keep it opaque; `undefined` payloads are stored as null). */
  readonly payload: string;
  /** When the task is (next) due. Retries move it forward. */
  readonly runAt: number;
  readonly state: TaskState;
  /** Deliveries so far, the current one included. */
  readonly attempts: number;
  readonly maxAttempts: number;
  /** Time to run: a reservation not acked within it is delivered again. */
  readonly ttrMs: number;
  readonly backoff: BackoffPolicy;
  readonly createdAt: number;
  readonly updatedAt: number;
  /** The fencing token of the current reservation; null unless reserved. */
  readonly receipt: string | null;
  /** When the current reservation runs out; null unless reserved. */
  readonly reservedUntil: number | null;
  readonly lastError: string | null;
  /**
   * The task's own push target (`schedule({url})`): pushed there whatever its topic, never
   * handed to pull consumers. Null for a task of its topic's pull consumers or subscription.
   */
  readonly url: string | null;
  /**
   * The scheduling call's W3C trace context (core/trace-context.ts): its `traceparent`, then
   * a space and its `tracestate` when it had one; null for a task scheduled without one.
   * Stores keep it as opaque text; absent in a record of a store that predates it.
   */
  readonly trace?: string | null;
  /**
   * Among due tasks of its lane, a higher priority is delivered first (ADR 0057); absent
   * (a record of a store that predates it, or a task of priority 0) is 0.
   */
  readonly priority?: number;
  /** The last attempts, oldest first, at most HISTORY_LIMIT (core/task/history.ts); [] for a task written before history was kept. */
  readonly history: readonly AttemptEntry[];
}

/**
 * What a reservation hands back: the fields a delivery is made of. A full TaskRecord fits; a
 * store may return just these (the memory store does, to allocate less per delivery).
 */
export type ReservedTask = Pick<TaskRecord, 'id' | 'topic' | 'payload' | 'runAt' | 'attempts' | 'maxAttempts' | 'receipt' | 'reservedUntil'> & {
  /** The task's own push target; absent or null for a task without one. */
  readonly url?: string | null;
  /** The scheduling call's trace context (TaskRecord.trace); absent or null for none. */
  readonly trace?: string | null;
};

/** What the engine asks a store to create: a fully validated, defaulted task. */
export interface NewTaskRecord {
  readonly id: string;
  readonly topic: string;
  readonly payload: string;
  readonly runAt: number;
  readonly maxAttempts: number;
  readonly ttrMs: number;
  readonly backoff: BackoffPolicy;
  /** The task's own push target (checked by the engine); absent for none. */
  readonly url?: string;
  /** The scheduling call's trace context, checked (core/trace-context.ts traceOf); absent for none. */
  readonly trace?: string;
  /** Its priority (checked, -100..100); absent for 0, the default. */
  readonly priority?: number;
}

/**
 * The lane the engine's timers and ready queues file a task under: its topic, or for a task
 * with its own push `url` its topic's push lane, PUSH_LANE_PREFIX + topic, which only the
 * Pusher consumes (no topic can be spelled with '~'). A push lane per topic, not one for
 * every topic, so that the topic's pause and flow limits hold its own-url pushes too
 * (topicOfLane). Stores put the lane in their timer refs' `topic`; records and deliveries
 * keep the task's real topic.
 */
export const PUSH_LANE_PREFIX = '~push:';

export function laneOf(topic: string, url: string | null | undefined): string {
  return url === null || url === undefined || url === '' ? topic : pushLaneOf(topic);
}

/** The push lane of `topic`: its tasks with their own url. */
export function pushLaneOf(topic: string): string {
  return PUSH_LANE_PREFIX + topic;
}

/** Whether `lane` is a push lane (a topic's tasks with their own url). */
export function isPushLane(lane: string): boolean {
  return lane.startsWith(PUSH_LANE_PREFIX);
}

/** The topic whose pause and limits govern `lane`: the topic itself, or a push lane's topic. */
export function topicOfLane(lane: string): string {
  return isPushLane(lane) ? lane.slice(PUSH_LANE_PREFIX.length) : lane;
}

/**
 * A reference to something due at `dueAt`: a pending task's runAt (`kind: 'run'`) or a
 * reservation's deadline (`kind: 'ttr'`, with its receipt). The engine keeps these, not
 * task bodies, in its wheel.
 */
export interface TimerRef {
  readonly id: string;
  /** The task's lane (laneOf): its topic, or its topic's push lane for a task with its own push url. */
  readonly topic: string;
  readonly kind: 'run' | 'ttr';
  readonly dueAt: number;
  /** Store-assigned insertion order: breaks ties between equal dueAt. */
  readonly seq: number;
  readonly receipt: string | null;
  /**
   * A run timer's task priority, where the store's dispatch is the engine's ready queue
   * (local dispatch: memory, SQLite); absent is 0. Shared stores order by priority themselves.
   */
  readonly priority?: number;
}

/** A task handed to a consumer. Ack or nack it with its receipt. */
export interface Delivery<P = unknown> {
  readonly id: string;
  readonly topic: string;
  readonly payload: P;
  readonly runAt: number;
  /** 1 for the first delivery, 2 for the first retry... */
  readonly attempt: number;
  readonly maxAttempts: number;
  readonly receipt: string;
  /** The reservation runs out at this time; after it the task may be delivered again. */
  readonly reservedUntil: number;
  /**
   * The W3C `traceparent` of the call that scheduled the task (its span, when delayq made
   * one with OpenTelemetry): start the handler's span as its child. Absent for a task
   * scheduled without one.
   */
  readonly traceparent?: string;
  /** The W3C `tracestate` that came with `traceparent`; absent for none. */
  readonly tracestate?: string;
}

/** What `get` returns: the task with its payload parsed. */
export interface TaskInfo<P = unknown> {
  readonly id: string;
  readonly topic: string;
  readonly payload: P;
  readonly runAt: number;
  readonly state: TaskState;
  readonly attempts: number;
  readonly maxAttempts: number;
  readonly ttrMs: number;
  readonly backoff: BackoffPolicy;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly reservedUntil: number | null;
  readonly lastError: string | null;
  /** The task's own push target, or null. */
  readonly url: string | null;
  /** Its priority: higher is delivered first among due tasks (0 by default). */
  readonly priority: number;
  /** The last attempts, oldest first, at most HISTORY_LIMIT (10). */
  readonly history: readonly AttemptEntry[];
  /** The W3C `traceparent` of the call that scheduled the task, as its deliveries carry it; absent for none. */
  readonly traceparent?: string;
  /** The W3C `tracestate` that came with `traceparent`; absent for none. */
  readonly tracestate?: string;
}

/** The delivery of a task just reserved; with its trace context when the task has one. */
export function toDelivery(record: ReservedTask): Delivery {
  const delivery: Delivery = {
    id: record.id,
    topic: record.topic,
    payload: JSON.parse(record.payload) as unknown,
    runAt: record.runAt,
    attempt: record.attempts,
    maxAttempts: record.maxAttempts,
    receipt: record.receipt!,
    reservedUntil: record.reservedUntil!,
  };
  if (record.trace === undefined || record.trace === null) return delivery;
  const headers = traceHeaders(record.trace);
  if (headers === null) return delivery;
  return headers.tracestate === undefined ? { ...delivery, traceparent: headers.traceparent } : { ...delivery, traceparent: headers.traceparent, tracestate: headers.tracestate };
}

export function toTaskInfo<P = unknown>(record: TaskRecord): TaskInfo<P> {
  const info: TaskInfo<P> = {
    id: record.id,
    topic: record.topic,
    payload: JSON.parse(record.payload) as P,
    runAt: record.runAt,
    state: record.state,
    attempts: record.attempts,
    maxAttempts: record.maxAttempts,
    ttrMs: record.ttrMs,
    backoff: record.backoff,
    createdAt: record.createdAt,
    updatedAt: record.updatedAt,
    reservedUntil: record.reservedUntil,
    lastError: record.lastError,
    url: record.url,
    priority: record.priority ?? 0,
    history: record.history,
  };
  // The trace the task's deliveries carry, so an operator can find the trace of a task.
  const headers = record.trace === undefined || record.trace === null ? null : traceHeaders(record.trace);
  if (headers === null) return info;
  return headers.tracestate === undefined ? { ...info, traceparent: headers.traceparent } : { ...info, traceparent: headers.traceparent, tracestate: headers.tracestate };
}
