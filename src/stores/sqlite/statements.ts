/**
 * Every SQL statement of the store, prepared once per connection. Updates address a row by
 * seq (its rowid) after the caller has read and judged it in the same transaction, so the
 * state machine lives in TypeScript (sqlite-store.ts) and the SQL stays one line a change.
 */
import type Database from 'better-sqlite3';
import type { TaskState } from '../../core/task/model.js';
import { HISTORY_LIMIT } from '../../core/task/history.js';
import { ADD_PARKED_DAY } from './migrations/0009_parked_days.js';
import { CONTROL_COLUMNS, TASK_COLUMNS, type ControlRow, type DueRow, type TaskRow } from './rows.js';


/** id, topic, runAt, dueAt (runAt or null), parkBucket (null or a bucket), maxAttempts, ttrMs, backoff base, factor, max, jitter, createdAt, updatedAt, payload. */
export type InsertParams = [string, string, number, number | null, number | null, number, number, number, number, number, number, number, number, string];

/**
 * What a reservation reads, as an array (raw mode): seq, topic, state, run_at, attempts,
 * max_attempts, ttr_ms, payload, url, trace. Only the columns a delivery is made of, since
 * better-sqlite3 converts every column it returns and builds an object per row (ADR 0016).
 */
export type ReserveRow = [seq: number, topic: string, state: TaskState, runAt: number, attempts: number, maxAttempts: number, ttrMs: number, payload: string, url: string | null, trace: string | null];

const PARKED_HOURS = Array.from({ length: 24 }, (_, h) => `h${h}`).join(', ');

/**
 * `history = ...` of a settlement (migration 0011): the attempt's entry appended, the oldest
 * dropped beyond HISTORY_LIMIT; its three parameters are (now, outcome, error). Read in the
 * SET of the settling UPDATE, `attempts` and `updated_at` are the row as it was: the
 * attempt's number and its reservation's time.
 */
const HISTORY_APPEND = `history = json_insert(
         CASE WHEN json_array_length(history) >= ${HISTORY_LIMIT} THEN json_remove(history, '$[0]') ELSE coalesce(history, '[]') END,
         '$[#]', json_array(attempts, updated_at, max(0, ? - updated_at), ?, ?))`;

/**
 * reserved -> completed, only with the current receipt: (now, 'acked', null, updatedAt, id,
 * receipt). The receipt moves to acked_receipt (SET reads the row as it was), so an ack sent
 * again finds it.
 */
const ACK = `UPDATE tasks SET ${HISTORY_APPEND}, state = 'completed', due_at = NULL, acked_receipt = receipt, receipt = NULL, reserved_until = NULL, updated_at = ?
       WHERE id = ? AND state = 'reserved' AND receipt = ?`;

/** A row of push_subscriptions, as an array (raw mode): topic, the subscription's JSON. */
export type PushRow = [topic: string, subscription: string];

/** A row of parked_runs, as an array (raw mode): run, bucket, the packed seqs (seq-runs.ts). */
export type ParkedRun = [run: number, bucket: number, seqs: Buffer];

// Spelled out: declaration emit cannot name the inferred better-sqlite3 statement types.
type Stmt<P extends unknown[], R = never> = Database.Statement<P, R>;

export interface Statements {
  readonly insert: Stmt<InsertParams, never>;
  readonly runAtOf: Stmt<[string], { run_at: number }>;
  /** Why an ack missed: the task's state and the receipt that completed it, if any. */
  readonly ackedReceiptOf: Stmt<[string], { state: string; acked_receipt: string | null }>;
  readonly control: Stmt<[string], ControlRow>;
  readonly full: Stmt<[string], TaskRow>;
  readonly reschedule: Stmt<[number, number, number, number], never>;
  readonly cancel: Stmt<[number, number], never>;
  readonly reserveRead: Stmt<[string], ReserveRow>;
  readonly setUrl: Stmt<[string, number], never>;
  readonly setTrace: Stmt<[string, number], never>;
  readonly setPriority: Stmt<[number, number], never>;
  readonly reserve: Stmt<[number, string, number, number, number, number], never>;
  readonly ack: Stmt<[number, string, null, number, string, string], { topic: string }>;
  readonly ackKnownTopic: Stmt<[number, string, null, number, string, string], never>;
  readonly retry: Stmt<[number, string, string | null, number, number, string | null, number, number], never>;
  readonly bury: Stmt<[number, string, string | null, string | null, number, number], never>;
  readonly quarantine: Stmt<[string, number, number], never>;
  readonly defer: Stmt<[number, number, number, number, number], never>;
  /** The reservations of a topic in force: (after, until, topic). */
  readonly reservedOf: Stmt<[number, number, string], { receipt: string; reserved_until: number }>;
  /** A reservation extended: (reservedUntil, dueAt, seq); the attempt's start (updated_at) stays. */
  readonly extend: Stmt<[number, number, number], never>;
  readonly retryDead: Stmt<[number, number, number, number], never>;
  /** dead -> cancelled: (updatedAt, seq). */
  readonly cancelDead: Stmt<[number, number], never>;
  readonly dueFirst: Stmt<[number, number], DueRow>;
  readonly dueAfter: Stmt<[number, number, number, number], DueRow>;
  readonly list: Stmt<[{ after: string; topic: string | null; state: string | null; limit: number }], TaskRow>;
  readonly listDead: Stmt<[{ after: string; topic: string | null; limit: number }], TaskRow>;
  readonly purge: Stmt<[number, number], { topic: string; state: TaskState }>;
  /** (after seq, rows) -> the next rows in seq order (a topic purge's step; payloads untouched). */
  readonly purgeScan: Stmt<[number, number], { seq: number; id: string; topic: string; state: TaskState }>;
  /** seq -> the deleted row's run_at and url (read anyway: a delete frees the row's pages). */
  readonly deleteSeq: Stmt<[number], { run_at: number; url: string | null }>;
  readonly counts: Stmt<[], { topic: string; state: TaskState; n: number }>;
  /** (from, bucketMs, from, to) -> pending tasks in tasks_due per bucket. */
  readonly dueBuckets: Stmt<[number, number, number, number], { b: number; n: number }>;
  /** (from, bucketMs, from, to, topic) -> the same, of one topic. */
  readonly dueBucketsOfTopic: Stmt<[number, number, number, number, string], { b: number; n: number }>;
  /** (first day, end day) -> rows [day, h0 .. h23] of parked tasks, every topic (0009; .raw()). */
  readonly parkedDays: Stmt<[number, number], number[]>;
  /** (first day, end day, topic) -> the same, of one topic. */
  readonly parkedDaysOfTopic: Stmt<[number, number, string], number[]>;
  /** (day, topic, h0 .. h23): adds newly parked tasks. */
  readonly addParkedDay: Stmt<[number, string, ...number[]], never>;
  readonly parkingState: Stmt<[], { frontier: number; bucket_ms: number }>;
  readonly setFrontier: Stmt<[number], never>;
  readonly addRun: Stmt<[number, Buffer], never>;
  readonly runsAfter: Stmt<[number, number], ParkedRun>;
  readonly unparkSeq: Stmt<[number, number], never>;
  readonly dropRun: Stmt<[number], never>;
  readonly addCount: Stmt<[string, string, number], never>;
  readonly putPush: Stmt<[string, string, number], never>;
  readonly getPush: Stmt<[string], string>;
  readonly listPush: Stmt<[], PushRow>;
  readonly deletePush: Stmt<[string], never>;
  readonly pauseTopic: Stmt<[string, number], never>;
  readonly resumeTopic: Stmt<[string], never>;
  readonly listPausedTopics: Stmt<[], string>;
  readonly putTopicLimits: Stmt<[string, string, number], never>;
  readonly deleteTopicLimits: Stmt<[string], never>;
  readonly listTopicLimits: Stmt<[], { topic: string; limits: string }>;
  readonly putSchedule: Stmt<[string, string, number], never>;
  readonly getSchedule: Stmt<[string], string>;
  /** Inserts a schedule unless its id has one (changes: 0). */
  readonly putNewSchedule: Stmt<[string, string, number], never>;
  readonly listSchedules: Stmt<[], [id: string, schedule: string]>;
  readonly deleteSchedule: Stmt<[string], never>;
  /** schedule, updated_at, id, the expected schedule text. */
  readonly swapSchedule: Stmt<[string, number, string, string], never>;
}

export function prepareStatements(db: Database.Database): Statements {
  return {
    // Positional parameters: binding an object per row costs ~5% of a batch insert.
    insert: db.prepare<InsertParams, never>(
      `INSERT INTO tasks (id, topic, state, run_at, due_at, park_bucket, attempts, max_attempts, ttr_ms,
                          backoff_base_ms, backoff_factor, backoff_max_ms, backoff_jitter, created_at, updated_at, payload)
       VALUES (?, ?, 'pending', ?, ?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (id) DO NOTHING`,
    ),
    runAtOf: db.prepare<[string], { run_at: number }>('SELECT run_at FROM tasks WHERE id = ?'),
    ackedReceiptOf: db.prepare<[string], { state: string; acked_receipt: string | null }>('SELECT state, acked_receipt FROM tasks WHERE id = ?'),
    control: db.prepare<[string], ControlRow>(`SELECT ${CONTROL_COLUMNS} FROM tasks WHERE id = ?`),
    full: db.prepare<[string], TaskRow>(`SELECT ${TASK_COLUMNS} FROM tasks WHERE id = ?`),

    // Each transition of the state machine (src/core/task/lifecycle.ts), by seq.
    reschedule: db.prepare<[number, number, number, number], never>('UPDATE tasks SET run_at = ?, due_at = ?, park_bucket = NULL, updated_at = ? WHERE seq = ?'),
    cancel: db.prepare<[number, number], never>("UPDATE tasks SET state = 'cancelled', due_at = NULL, park_bucket = NULL, updated_at = ? WHERE seq = ?"),
    reserveRead: db.prepare<[string], ReserveRow>('SELECT seq, topic, state, run_at, attempts, max_attempts, ttr_ms, payload, url, trace FROM tasks WHERE id = ?').raw(),
    // A new task's own push target, written after its insert (migration 0006).
    setUrl: db.prepare<[string, number], never>('UPDATE tasks SET url = ? WHERE seq = ?'),
    // A new task's trace context, written after its insert like its url (migration 0013).
    setTrace: db.prepare<[string, number], never>('UPDATE tasks SET trace = ? WHERE seq = ?'),
    // A new task's priority other than 0, written after its insert like its trace (migration 0014).
    setPriority: db.prepare<[number, number], never>('UPDATE tasks SET priority = ? WHERE seq = ?'),
    reserve: db.prepare<[number, string, number, number, number, number], never>(
      "UPDATE tasks SET state = 'reserved', attempts = ?, receipt = ?, reserved_until = ?, due_at = ?, park_bucket = NULL, updated_at = ? WHERE seq = ?",
    ),
    // The ack of the current reservation, judged and written in one statement, cheaper than
    // reading the row first (ADR 0016); ack() reads more only when it matches nothing, to say why.
    ack: db.prepare<[number, string, null, number, string, string], { topic: string }>(`${ACK} RETURNING topic`),
    // The same when the caller knows the topic (the engine's own deliveries): without
    // RETURNING, whose conversion of the row is a large share of the statement (ADR 0016).
    ackKnownTopic: db.prepare<[number, string, null, number, string, string], never>(ACK),
    // (now, outcome, history error, runAt, dueAt, lastError, updatedAt, seq)
    retry: db.prepare<[number, string, string | null, number, number, string | null, number, number], never>(
      `UPDATE tasks SET ${HISTORY_APPEND}, state = 'pending', run_at = ?, due_at = ?, receipt = NULL, reserved_until = NULL, last_error = ?, updated_at = ? WHERE seq = ?`,
    ),
    // A reservation given back uncounted (the push circuit breaker): (attempts, runAt, dueAt, updatedAt, seq).
    defer: db.prepare<[number, number, number, number, number], never>(
      "UPDATE tasks SET state = 'pending', attempts = ?, run_at = ?, due_at = ?, receipt = NULL, reserved_until = NULL, updated_at = ? WHERE seq = ?",
    ),
    extend: db.prepare<[number, number, number], never>('UPDATE tasks SET reserved_until = ?, due_at = ? WHERE seq = ?'),
    reservedOf: db.prepare<[number, number, string], { receipt: string; reserved_until: number }>(
      "SELECT receipt, reserved_until FROM tasks WHERE due_at > ? AND due_at <= ? AND state = 'reserved' AND topic = ?",
    ),
    // (now, outcome, history error, lastError, updatedAt, seq)
    bury: db.prepare<[number, string, string | null, string | null, number, number], never>(
      `UPDATE tasks SET ${HISTORY_APPEND}, state = 'dead', due_at = NULL, receipt = NULL, reserved_until = NULL, last_error = ?, updated_at = ? WHERE seq = ?`,
    ),
    // A row the engine cannot read, out of delivery (core/task/undecodable.ts): (lastError, updatedAt, seq).
    quarantine: db.prepare<[string, number, number], never>(
      "UPDATE tasks SET state = 'dead', due_at = NULL, park_bucket = NULL, receipt = NULL, reserved_until = NULL, last_error = ?, updated_at = ? WHERE seq = ?",
    ),
    cancelDead: db.prepare<[number, number], never>("UPDATE tasks SET state = 'cancelled', updated_at = ? WHERE seq = ? AND state = 'dead'"),
    retryDead: db.prepare<[number, number, number, number], never>(
      "UPDATE tasks SET state = 'pending', attempts = 0, run_at = ?, due_at = ?, updated_at = ? WHERE seq = ?",
    ),

    // The scheduler's feed: a range scan of the partial index tasks_due.
    dueFirst: db.prepare<[number, number], DueRow>(
      'SELECT id, topic, state, due_at, seq, receipt, url, priority FROM tasks WHERE due_at IS NOT NULL AND due_at < ? ORDER BY due_at, seq LIMIT ?',
    ),
    dueAfter: db.prepare<[number, number, number, number], DueRow>(
      `SELECT id, topic, state, due_at, seq, receipt, url, priority FROM tasks
       WHERE due_at IS NOT NULL AND due_at < ? AND (due_at, seq) > (?, ?) ORDER BY due_at, seq LIMIT ?`,
    ),

    // Walks the id index in order; the filters are checked row by row along the way.
    list: db.prepare<[{ after: string; topic: string | null; state: string | null; limit: number }], TaskRow>(
      `SELECT ${TASK_COLUMNS} FROM tasks
       WHERE id > @after AND (@topic IS NULL OR topic = @topic) AND (@state IS NULL OR state = @state)
       ORDER BY id LIMIT @limit`,
    ),
    // The literal 'dead' matches the partial index tasks_dead (a bound state would not), so
    // dead letters are found without walking every row.
    listDead: db.prepare<[{ after: string; topic: string | null; limit: number }], TaskRow>(
      `SELECT ${TASK_COLUMNS} FROM tasks
       WHERE state = 'dead' AND id > @after AND (@topic IS NULL OR topic = @topic)
       ORDER BY id LIMIT @limit`,
    ),

    // The literal state list matches the partial index tasks_finished, so this is a range scan.
    purge: db.prepare<[number, number], { topic: string; state: TaskState }>(
      `DELETE FROM tasks WHERE seq IN (
         SELECT seq FROM tasks WHERE state IN ('completed', 'cancelled') AND updated_at < ? LIMIT ?
       ) RETURNING topic, state`,
    ),

    // Control columns only: a row's payload is last and stays in its overflow pages.
    purgeScan: db.prepare<[number, number], { seq: number; id: string; topic: string; state: TaskState }>(
      'SELECT seq, id, topic, state FROM tasks WHERE seq > ? ORDER BY seq LIMIT ?',
    ),
    deleteSeq: db.prepare<[number], { run_at: number; url: string | null }>('DELETE FROM tasks WHERE seq = ? RETURNING run_at, url'),

    // Parking (parking.ts): filing runs of parked seqs, reading them in order, moving their rows to tasks_due.
    parkingState: db.prepare<[], { frontier: number; bucket_ms: number }>('SELECT frontier, bucket_ms FROM parking_state WHERE id = 1'),
    setFrontier: db.prepare<[number], never>('UPDATE parking_state SET frontier = ? WHERE id = 1'),
    addRun: db.prepare<[number, Buffer], never>('INSERT INTO parked_runs (bucket, seqs) VALUES (?, ?)'),
    runsAfter: db.prepare<[number, number], ParkedRun>('SELECT run, bucket, seqs FROM parked_runs WHERE run > ? ORDER BY run LIMIT ?').raw(),
    // Only a row still parked in the run's bucket: a cancel, a reschedule or a reservation may have moved it since.
    unparkSeq: db.prepare<[number, number], never>('UPDATE tasks SET due_at = run_at, park_bucket = NULL WHERE seq = ? AND park_bucket = ?'),
    dropRun: db.prepare<[number], never>('DELETE FROM parked_runs WHERE run = ?'),

    counts: db.prepare<[], { topic: string; state: TaskState; n: number }>('SELECT topic, state, n FROM task_counts WHERE n <> 0'),
    dueBuckets: db.prepare<[number, number, number, number], { b: number; n: number }>(
      `SELECT CAST((due_at - ?) / ? AS INTEGER) AS b, count(*) AS n FROM tasks INDEXED BY tasks_due
       WHERE due_at IS NOT NULL AND due_at >= ? AND due_at < ? AND state = 'pending' GROUP BY b`,
    ),
    dueBucketsOfTopic: db.prepare<[number, number, number, number, string], { b: number; n: number }>(
      `SELECT CAST((due_at - ?) / ? AS INTEGER) AS b, count(*) AS n FROM tasks INDEXED BY tasks_due
       WHERE due_at IS NOT NULL AND due_at >= ? AND due_at < ? AND state = 'pending' AND topic = ? GROUP BY b`,
    ),
    parkedDays: db.prepare<[number, number], number[]>(`SELECT day, ${PARKED_HOURS} FROM parked_days WHERE day >= ? AND day < ?`).raw(),
    parkedDaysOfTopic: db.prepare<[number, number, string], number[]>(`SELECT day, ${PARKED_HOURS} FROM parked_days WHERE day >= ? AND day < ? AND topic = ?`).raw(),
    addParkedDay: db.prepare<[number, string, ...number[]], never>(ADD_PARKED_DAY),
    addCount: db.prepare<[string, string, number], never>(
      'INSERT INTO task_counts (topic, state, n) VALUES (?, ?, ?) ON CONFLICT (topic, state) DO UPDATE SET n = n + excluded.n',
    ),

    // Push subscriptions (0005): a few rows, each one JSON text (push-subscription-codec.ts).
    putPush: db.prepare<[string, string, number], never>(
      `INSERT INTO push_subscriptions (topic, subscription, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (topic) DO UPDATE SET subscription = excluded.subscription, updated_at = excluded.updated_at`,
    ),
    getPush: db.prepare<[string], string>('SELECT subscription FROM push_subscriptions WHERE topic = ?').pluck(),
    listPush: db.prepare<[], PushRow>('SELECT topic, subscription FROM push_subscriptions').raw(),
    deletePush: db.prepare<[string], never>('DELETE FROM push_subscriptions WHERE topic = ?'),

    // Paused topics (0010): a row per paused topic.
    pauseTopic: db.prepare<[string, number], never>('INSERT INTO paused_topics (topic, paused_at) VALUES (?, ?) ON CONFLICT (topic) DO NOTHING'),
    resumeTopic: db.prepare<[string], never>('DELETE FROM paused_topics WHERE topic = ?'),
    listPausedTopics: db.prepare<[], string>('SELECT topic FROM paused_topics ORDER BY topic').pluck(),
    // Topic limits (0012): changes is 0 when the row already holds these limits.
    putTopicLimits: db.prepare<[string, string, number], never>(
      'INSERT INTO topic_limits (topic, limits, set_at) VALUES (?, ?, ?) ON CONFLICT (topic) DO UPDATE SET limits = excluded.limits, set_at = excluded.set_at WHERE limits <> excluded.limits',
    ),
    deleteTopicLimits: db.prepare<[string], never>('DELETE FROM topic_limits WHERE topic = ?'),
    listTopicLimits: db.prepare<[], { topic: string; limits: string }>('SELECT topic, limits FROM topic_limits ORDER BY topic'),

    // Recurring schedules (0007): one JSON text per schedule (schedule-codec.ts).
    putSchedule: db.prepare<[string, string, number], never>(
      `INSERT INTO schedules (id, schedule, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET schedule = excluded.schedule, updated_at = excluded.updated_at`,
    ),
    getSchedule: db.prepare<[string], string>('SELECT schedule FROM schedules WHERE id = ?').pluck(),
    putNewSchedule: db.prepare<[string, string, number], never>('INSERT INTO schedules (id, schedule, updated_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING'),
    listSchedules: db.prepare<[], [string, string]>('SELECT id, schedule FROM schedules ORDER BY id').raw(),
    deleteSchedule: db.prepare<[string], never>('DELETE FROM schedules WHERE id = ?'),
    swapSchedule: db.prepare<[string, number, string, string], never>('UPDATE schedules SET schedule = ?, updated_at = ? WHERE id = ? AND schedule = ?'),
  };
}
