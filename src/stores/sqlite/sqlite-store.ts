/**
 * The durable embedded store: every task is a row of one SQLite file (WAL mode), every
 * write commits through the group-commit writer before its promise resolves, and the
 * engine keeps only the next `horizonMs` of the schedule in memory, reading the rest by a
 * range scan of the (due_at, seq) index as time moves on.
 *
 * This class holds the connection, the writer and the roles, and closes: the tasks role is
 * sqlite-tasks.ts, the record roles are built by storedRecordRoles over the parts here.
 */
import type Database from 'better-sqlite3';
import { silentLogger } from '../../core/logger.js';
import type { Clock, Logger, TaskStore, PushSubscriptionStore, RecurringScheduleStore, TopicStore } from '../../core/ports/index.js';
import { StoredRecordReader } from '../decode-or-warn.js';
import type { CountDeltas } from './count-deltas.js';
import { translate, type Connection } from './connection.js';
import { GroupCommit } from './group-commit.js';
import { TaskInserter } from './inserts.js';
import { Parking } from './parking.js';
import { SqliteTopicPauses } from './topic-pauses.js';
import { SqliteTopicLimits } from './topic-limits.js';
import { FlowLedger } from '../../core/flow/flow-ledger.js';
import { SqlitePushSubscriptions } from './push-subscriptions.js';
import { SqliteSchedules } from './recurring-schedules.js';
import { storedRecordRoles } from '../shared/record-roles.js';
import { closedError, SqliteTasks } from './sqlite-tasks.js';
import { prepareStatements, type Statements } from './statements.js';

export class SqliteStore implements TaskStore {
  readonly description: string;
  readonly tasks: SqliteTasks;
  /** One process owns the file (an exclusive lock, STORE_LOCKED for a second). */
  readonly coordination = null;
  readonly transactional = null;
  private readonly db: Database.Database;
  private readonly sql: Statements;
  private readonly writer: GroupCommit;
  private readonly parking: Parking;
  readonly push: PushSubscriptionStore;
  readonly schedules: RecurringScheduleStore;
  readonly topics: TopicStore;
  private closed = false;

  constructor(
    private readonly connection: Connection,
    readonly path: string,
    readonly horizonMs: number,
    clock: Clock,
    private readonly logger: Logger = silentLogger,
  ) {
    this.description = `sqlite:${path}`;
    this.db = connection.db;
    this.sql = prepareStatements(this.db);
    this.writer = new GroupCommit(
      this.db,
      clock,
      (counts) => {
        for (const { topic, state, n } of counts.entries()) this.sql.addCount.run(topic, state, n);
        for (const { day, topic, hours } of counts.parkedEntries()) this.sql.addParkedDay.run(day, topic, ...hours);
      },
      (error) => translate(error, path, 'write'),
      4_000, // maxWeight: a flush's writes, then the event loop's turn (ADR 0014)
      () => connection.mayWrite(),
      () => this.parking.flush(),
      () => connection.committed(),
    );
    this.parking = new Parking(this.sql, (weight, apply) => this.write(weight, apply), (error) =>
      logger.warn({ err: error, path }, 'sqlite: moving parked tasks ahead of time failed; the next load retries'),
    );
    const inserter = new TaskInserter(this.db, (bucket, seq, topic, runAt, counts) => {
      this.parking.record(bucket, seq);
      counts.parked(topic, runAt);
    });
    const reader = new StoredRecordReader(this.description, logger, { path });
    const write = this.write.bind(this);
    this.tasks = new SqliteTasks({ path, sql: this.sql, writer: this.writer, parking: this.parking, inserter, write, isClosed: () => this.closed });
    const roles = storedRecordRoles({
      push: new SqlitePushSubscriptions(this.sql, write, reader),
      schedules: new SqliteSchedules(this.sql, write, reader),
      topicPauses: new SqliteTopicPauses(this.sql, write, () => clock.now()),
      topicLimits: new SqliteTopicLimits(this.sql, write, () => clock.now()),
      // Buckets and slots in memory: this process is the only one delivering from the file.
      flowState: new FlowLedger(),
      reservedLeases: (topic, now, until) => this.tasks.reservedLeases(topic, now, until),
      assertOpen: () => this.assertOpen(),
    });
    this.push = roles.push;
    this.schedules = roles.schedules;
    this.topics = roles.topics;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // Writes already accepted are committed, not dropped.
    this.writer.drain();
    await this.connection.close();
  }

  // ---------------------------------------------------------------------------------

  /** `oneStatement`: see GroupCommit.submit; true only where the single write comes last. */
  private write<T>(weight: number, apply: (counts: CountDeltas) => T, oneStatement = false): Promise<T> {
    if (this.closed) return Promise.reject(closedError(this.path));
    return this.writer.submit(Math.max(1, weight), apply, oneStatement);
  }

  private assertOpen(): void {
    if (this.closed) throw closedError(this.path);
  }
}
