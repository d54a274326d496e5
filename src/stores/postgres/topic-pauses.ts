/**
 * The PostgreSQL store's paused topics (migration 0004): a row per paused topic, and a
 * version in meta moved in the same statement as the row, so a process that reads an
 * unchanged version has the set as it is (one statement, one snapshot, for the read too).
 */
import type { PausedTopics } from '../../core/ports/index.js';
import type { TopicPausePart } from '../shared/record-roles.js';
import type { PgContext } from './context.js';

export class PgTopicPauses implements TopicPausePart {
  constructor(
    private readonly pg: PgContext,
    /** paused_at: the wall time of the write, for operators only. */
    private readonly wallNow: () => number,
  ) {}

  async set(topic: string, paused: boolean): Promise<boolean> {
    const t = (name: string): string => this.pg.t(name);
    // The change and the version move together: the version's UPDATE runs only when the
    // insert or delete changed a row (a data-modifying CTE's RETURNING feeds the next).
    const change = paused
      ? `INSERT INTO ${t('paused_topics')} (topic, paused_at) VALUES ($1, $2) ON CONFLICT (topic) DO NOTHING RETURNING topic`
      : `DELETE FROM ${t('paused_topics')} WHERE topic = $1 AND $2::bigint IS NOT NULL RETURNING topic`;
    const rows = await this.pg.query<{ changed: string }>(
      `WITH changed AS (${change}),
       bumped AS (UPDATE ${t('meta')} SET value = (value::bigint + 1)::text WHERE key = 'paused_version' AND EXISTS (SELECT 1 FROM changed) RETURNING 1)
       SELECT (SELECT count(*) FROM changed) + 0 * (SELECT count(*) FROM bumped) AS changed`,
      [topic, this.wallNow()],
    );
    return Number(rows[0]?.changed ?? 0) > 0;
  }

  async read(): Promise<PausedTopics> {
    const rows = await this.pg.query<{ version: string; topics: string[] }>(
      `SELECT (SELECT value FROM ${this.pg.t('meta')} WHERE key = 'paused_version') AS version,
              coalesce((SELECT array_agg(topic ORDER BY topic) FROM ${this.pg.t('paused_topics')}), '{}') AS topics`,
      [],
    );
    return { version: rows[0]?.version ?? '0', topics: rows[0]?.topics ?? [] };
  }
}
