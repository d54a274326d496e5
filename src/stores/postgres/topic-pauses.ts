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
    // The change and the version move together: the version's UPDATE runs only when the
    // insert or delete changed a row (a data-modifying CTE's RETURNING feeds the next).
    const rows = paused
      ? await this.pg.query<{ changed: string }>(this.pg.sql('pause'), [topic, this.wallNow()])
      : await this.pg.query<{ changed: string }>(this.pg.sql('resume'), [topic]);
    return Number(rows[0]?.changed ?? 0) > 0;
  }

  async read(): Promise<PausedTopics> {
    const rows = await this.pg.query<{ version: string; topics: string[] }>(this.pg.sql('pauses-read'), []);
    return { version: rows[0]?.version ?? '0', topics: rows[0]?.topics ?? [] };
  }
}
