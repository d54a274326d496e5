/**
 * The numbered migrations of a delayq schema, in order. A schema records the number of the
 * last one applied in `meta` ('schema_version'); schema.ts applies the missing ones on open,
 * in one transaction under an advisory lock. Append only: a migration that shipped never
 * changes, and a schema whose number is above the last one here was written by a newer
 * delayq and is refused.
 */
import { sql as initial } from './0001_initial.js';
import { sql as shared } from './0002_shared.js';
import { sql as functions } from './0003_sql_functions.js';
import { sql as pausedTopics } from './0004_paused_topics.js';
import { sql as attemptHistory } from './0005_attempt_history.js';
import { sql as compactRows } from './0006_compact_rows.js';
import { sql as topicLimits } from './0007_topic_limits.js';
import { sql as reservePick } from './0008_reserve_pick.js';
import { sql as defaultNulls } from './0009_default_nulls.js';

export const MIGRATIONS: readonly string[] = [initial, shared, functions, pausedTopics, attemptHistory, compactRows, topicLimits, reservePick, defaultNulls];

/** The migrations' SQL for one schema: `S.` names the schema's objects, `{schema}` is its bare name. */
export function forSchema(sql: string, schema: string): string {
  return sql.replace(/\bS\./g, `"${schema}".`).replaceAll('{schema}', schema);
}
