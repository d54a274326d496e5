/**
 * The SQLite store's topic limits: a row per limited topic (migration 0012), written through
 * the group commit like a pause, so a limit set resolves only once durable. The version is
 * a counter in memory, as for pauses (one process holds the file). The buckets and slots
 * are in memory (FlowLedger): this process is the only one delivering.
 */
import { dict } from '../../core/dict.js';
import { decodeTopicLimits, encodeTopicLimits, type LimitedTopics, type TopicLimits } from '../../core/flow/limits.js';
import type { TopicLimitPart } from '../shared/record-roles.js';
import type { SubmitWrite } from './group-commit.js';
import type { Statements } from './statements.js';

export class SqliteTopicLimits implements TopicLimitPart {
  private changes = 0;

  constructor(
    private readonly sql: Statements,
    private readonly write: SubmitWrite,
    /** set_at: the wall time of the write, for operators only. */
    private readonly wallNow: () => number,
  ) {}

  set(topic: string, limits: TopicLimits | null): Promise<boolean> {
    return this.write(
      1,
      () => {
        const result = limits === null ? this.sql.deleteTopicLimits.run(topic) : this.sql.putTopicLimits.run(topic, encodeTopicLimits(limits), this.wallNow());
        const changed = result.changes > 0;
        if (changed) this.changes++;
        return changed;
      },
      true,
    );
  }

  read(): LimitedTopics {
    const limits = dict<TopicLimits>();
    for (const row of this.sql.listTopicLimits.all()) limits[row.topic] = decodeTopicLimits(row.limits);
    return { version: String(this.changes), limits };
  }
}
