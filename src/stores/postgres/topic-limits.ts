/**
 * The PostgreSQL store's topic limits (migration 0007, ADR 0043): a row per limited topic
 * and `limits_version` in meta, moved by the same statement as the row (as topic-pauses.ts
 * does for pauses). Admissions are one call each of the schema's flow_admit and flow_bind
 * functions, one transaction each, serialised per topic on its bucket row.
 */
import { dict } from '../../core/dict.js';
import { decodeTopicLimits, encodeTopicLimits, type LimitedTopics, type TopicLimits } from '../../core/flow/limits.js';
import type { FlowAdmission, FlowAdmissionRequest, FlowBinding, FlowLease } from '../../core/ports/index.js';
import type { FlowStatePart, TopicLimitPart } from '../shared/record-roles.js';
import type { PgContext } from './context.js';

export class PgTopicLimits implements TopicLimitPart {
  constructor(
    private readonly pg: PgContext,
    /** set_at: the wall time of the write, for operators only. */
    private readonly wallNow: () => number,
  ) {}

  async set(topic: string, limits: TopicLimits | null): Promise<boolean> {
    // The change and the version move together, in one statement (sql/limits-set.sql).
    const rows =
      limits === null
        ? await this.pg.query<{ changed: string }>(this.pg.sql('limits-clear'), [topic])
        : await this.pg.query<{ changed: string }>(this.pg.sql('limits-set'), [topic, encodeTopicLimits(limits), this.wallNow()]);
    return Number(rows[0]?.changed ?? 0) > 0;
  }

  async read(): Promise<LimitedTopics> {
    const rows = await this.pg.query<{ version: string; limits: [string, string][] | null }>(this.pg.sql('limits-read'), []);
    const limits = dict<TopicLimits>();
    for (const [topic, encoded] of rows[0]?.limits ?? []) limits[topic] = decodeTopicLimits(encoded);
    return { version: rows[0]?.version ?? '0', limits };
  }
}

export class PgFlowState implements FlowStatePart {
  constructor(private readonly pg: PgContext) {}

  async admit({ topic, limits, want, holder, holdUntil, now }: FlowAdmissionRequest): Promise<FlowAdmission> {
    const rows = await this.pg.query<{ granted: number; retry_at: string }>(
      this.pg.sql('flow-admit'),
      [topic, limits.rate, limits.periodMs, limits.burst, limits.concurrency, want, holder, holdUntil, now],
    );
    return { granted: Number(rows[0]?.granted ?? 0), retryAt: Number(rows[0]?.retry_at ?? 0) };
  }

  async bind({ topic, limits, holder, unused, leases, now }: FlowBinding): Promise<void> {
    // With a rate the bucket is always brought to now: the admission's tokens are held until this call.
    if (limits.concurrency === null && limits.rate === null) return;
    await this.pg.query(this.pg.sql('flow-bind'), [
      topic,
      limits.rate,
      limits.periodMs,
      limits.burst,
      holder,
      unused,
      leases.map((lease) => lease.key),
      leases.map((lease) => lease.until),
      now,
    ]);
  }

  async release(topic: string, ids: readonly string[]): Promise<void> {
    await this.pg.query(this.pg.sql('flow-release'), [topic, ids]);
  }

  async hold(topic: string, leases: readonly FlowLease[]): Promise<void> {
    await this.pg.query(this.pg.sql('flow-hold'), [topic, leases.map((lease) => lease.key), leases.map((lease) => lease.until)]);
  }
}
