/**
 * The schema history, oldest first. A migration is never edited once released: a change
 * is a new numbered file appended here. `version` is what PRAGMA user_version holds after
 * the migration ran, so a database says by itself how far it has been migrated. A
 * migration is SQL, or a function for what SQL alone cannot say; either runs inside the
 * one transaction that applies the missing migrations. Versions ascend but need not be
 * contiguous (a number reserved for a branch not merged yet leaves a gap).
 */
import type Database from 'better-sqlite3';
import { sql as initial } from './0001_initial.js';
import { apply as dropStateCheck } from './0002_state_check.js';
import { apply as buildParkedRuns, sql as parkedRuns } from './0003_parked_runs.js';
import { sql as deadIndex } from './0004_dead_index.js';
import { sql as pushSubscriptions } from './0005_push_subscriptions.js';
import { sql as taskUrl } from './0006_task_url.js';
import { sql as schedules } from './0007_schedules.js';
import { sql as ackedReceipt } from './0008_acked_receipt.js';
import { sql as parkedDays } from './0009_parked_days.js';
import { sql as pausedTopics } from './0010_paused_topics.js';
import { sql as attemptHistory } from './0011_attempt_history.js';
import { sql as topicLimits } from './0012_topic_limits.js';
import { sql as taskTrace } from './0013_task_trace.js';
import { sql as taskPriority } from './0014_task_priority.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql?: string;
  readonly apply?: (db: Database.Database) => void;
}

export const MIGRATIONS: readonly Migration[] = [
  { version: 1, name: '0001_initial', sql: initial },
  { version: 2, name: '0002_state_check', apply: dropStateCheck },
  { version: 3, name: '0003_parked_runs', sql: parkedRuns, apply: buildParkedRuns },
  { version: 4, name: '0004_dead_index', sql: deadIndex },
  { version: 5, name: '0005_push_subscriptions', sql: pushSubscriptions },
  { version: 6, name: '0006_task_url', sql: taskUrl },
  { version: 7, name: '0007_schedules', sql: schedules },
  { version: 8, name: '0008_acked_receipt', sql: ackedReceipt },
  { version: 9, name: '0009_parked_days', sql: parkedDays },
  { version: 10, name: '0010_paused_topics', sql: pausedTopics },
  { version: 11, name: '0011_attempt_history', sql: attemptHistory },
  { version: 12, name: '0012_topic_limits', sql: topicLimits },
  { version: 13, name: '0013_task_trace', sql: taskTrace },
  { version: 14, name: '0014_task_priority', sql: taskPriority },
];

/** The version the last migration leaves: the highest, since versions ascend. */
export const LATEST_VERSION = Math.max(...MIGRATIONS.map((m) => m.version));
