/**
 * The SQLite store's paused topics: a row per paused topic (migration 0010), written through
 * the group commit like any task change, so a pause resolves only once it is as durable as
 * a schedule. One process holds the file (lock.ts), so the version is a counter in memory,
 * moved inside the write (a rolled-back write moves it too: a needless re-read, never a
 * missed one).
 */
import type { PausedTopics } from '../../core/ports/index.js';
import type { TopicPausePart } from '../shared/record-roles.js';
import type { SubmitWrite } from './group-commit.js';
import type { Statements } from './statements.js';

export class SqliteTopicPauses implements TopicPausePart {
  private changes = 0;

  constructor(
    private readonly sql: Statements,
    private readonly write: SubmitWrite,
    /** paused_at: the wall time of the write, for operators only. */
    private readonly wallNow: () => number,
  ) {}

  set(topic: string, paused: boolean): Promise<boolean> {
    return this.write(
      1,
      () => {
        const changed = (paused ? this.sql.pauseTopic.run(topic, this.wallNow()) : this.sql.resumeTopic.run(topic)).changes > 0;
        if (changed) this.changes++;
        return changed;
      },
      true,
    );
  }

  read(): PausedTopics {
    return { version: String(this.changes), topics: this.sql.listPausedTopics.all() };
  }
}
