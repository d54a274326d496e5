/**
 * The PostgreSQL store's topic limits (migration 0007, ADR 0043): a row per limited topic
 * and `limits_version` in meta, moved by the same statement as the row (as topic-pauses.ts
 * does for pauses). Admissions are one call each of the schema's flow_admit and flow_bind
 * functions, one transaction each, serialised per topic on its bucket row.
 */
import { decodeTopicLimits, encodeTopicLimits, type LimitedTopics, type TopicLimits } from '../../core/flow/limits.js';
import type { FlowAdmission, FlowLease } from '../../core/ports/index.js';
import type { FlowStatePart, TopicLimitPart } from '../shared/record-roles.js';
import type { PgContext } from './context.js';

export class PgTopicLimits implements TopicLimitPart {
  constructor(
    private readonly pg: PgContext,
    /** set_at: the wall time of the write, for operators only. */
    private readonly wallNow: () => number,
  ) {}

  async set(topic: string, limits: TopicLimits | null): Promise<boolean> {
    const t = (name: string): string => this.pg.t(name);
    const change =
      limits === null
        ? `DELETE FROM ${t('topic_limits')} WHERE topic = $1 AND $2::text IS NULL AND $3::bigint IS NOT NULL RETURNING topic`
        : `INSERT INTO ${t('topic_limits')} (topic, limits, set_at) VALUES ($1, $2, $3)
           ON CONFLICT (topic) DO UPDATE SET limits = excluded.limits, set_at = excluded.set_at
           WHERE ${t('topic_limits')}.limits IS DISTINCT FROM excluded.limits RETURNING topic`;
    const rows = await this.pg.query<{ changed: string }>(
      `WITH changed AS (${change}),
       bumped AS (UPDATE ${t('meta')} SET value = (value::bigint + 1)::text WHERE key = 'limits_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
       SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed`,
      [topic, limits === null ? null : encodeTopicLimits(limits), this.wallNow()],
    );
    return Number(rows[0]?.changed ?? 0) > 0;
  }

  async read(): Promise<LimitedTopics> {
    const rows = await this.pg.query<{ version: string; limits: [string, string][] | null }>(
      `SELECT (SELECT value FROM ${this.pg.t('meta')} WHERE key = 'limits_version') AS version,
              (SELECT json_agg(json_build_array(topic, limits) ORDER BY topic) FROM ${this.pg.t('topic_limits')}) AS limits`,
      [],
    );
    const limits: Record<string, TopicLimits> = {};
    for (const [topic, encoded] of rows[0]?.limits ?? []) limits[topic] = decodeTopicLimits(encoded);
    return { version: rows[0]?.version ?? '0', limits };
  }
}

export class PgFlowState implements FlowStatePart {
  constructor(private readonly pg: PgContext) {}

  async admit(topic: string, limits: TopicLimits, want: number, holder: string, holdUntil: number, now: number): Promise<FlowAdmission> {
    const rows = await this.pg.query<{ granted: number; retry_at: string }>(
      `SELECT granted, retry_at FROM ${this.pg.t('flow_admit')}($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [topic, limits.rate, limits.periodMs, limits.burst, limits.concurrency, want, holder, holdUntil, now],
    );
    return { granted: Number(rows[0]?.granted ?? 0), retryAt: Number(rows[0]?.retry_at ?? 0) };
  }

  async bind(topic: string, limits: TopicLimits, holder: string, unused: number, leases: readonly FlowLease[], now: number): Promise<void> {
    if (limits.concurrency === null && (unused === 0 || limits.rate === null)) return;
    await this.pg.query(`SELECT ${this.pg.t('flow_bind')}($1, $2, $3, $4, $5, $6, $7, $8, $9)`, [
      topic,
      limits.rate,
      limits.periodMs,
      limits.burst,
      holder,
      unused,
      leases.map((lease) => lease.id),
      leases.map((lease) => lease.until),
      now,
    ]);
  }

  async release(topic: string, ids: readonly string[]): Promise<void> {
    await this.pg.query(`DELETE FROM ${this.pg.t('flow_slots')} WHERE topic = $1 AND holder = ANY($2::text[])`, [topic, ids]);
  }
}
