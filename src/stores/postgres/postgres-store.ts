/**
 * The PostgreSQL store: every task a row of `<schema>.tasks`, every change one statement or
 * one transaction with `now` passed in, and the engine keeping only the next `horizonMs` of
 * the schedule in memory, reading the rest by a range scan of tasks_due as time moves on.
 *
 * This class holds the roles and closes: the tasks role is postgres-tasks.ts (with its group
 * commit), the record roles are built by storedRecordRoles, and the calls in flight are
 * counted in open-calls.ts, so close waits for those it had accepted.
 */
import { EVENT_LOG_RETAIN } from '../../core/events.js';
import { PgEventLog } from './event-log.js';
import type { Clock, Logger, TaskStore, PushSubscriptionStore, RecurringScheduleStore, TopicStore } from '../../core/ports/index.js';
import { StoredRecordReader } from '../decode-or-warn.js';
import { storedRecordRoles } from '../shared/record-roles.js';
import type { PgContext } from './context.js';
import { OpenCalls } from './open-calls.js';
import { PostgresTasks } from './postgres-tasks.js';
import { PgPushSubscriptions } from './push-subscriptions.js';
import { PgSchedules } from './recurring-schedules.js';
import type { PgShared } from './shared.js';
import { PgTopicPauses } from './topic-pauses.js';
import { PgFlowState, PgTopicLimits } from './topic-limits.js';
import { PgTransactional } from './transactional.js';
import { channelsOf } from './channels.js';

export interface PostgresStoreParts {
  readonly pg: PgContext;
  readonly description: string;
  readonly horizonMs: number;
  readonly logger: Logger;
  /** What several processes on one schema work through (shared.ts). */
  readonly shared: PgShared;
  /** The store's clock: only for when a topic was paused, shown to operators. */
  readonly clock: Clock;
}

export class PostgresStore implements TaskStore {
  readonly description: string;
  readonly horizonMs: number;
  readonly tasks: PostgresTasks;
  readonly coordination: PgShared;
  readonly transactional: PgTransactional;
  /** The lifecycle events of every process on the schema: the table task_events (event-log.ts). */
  readonly eventLog: PgEventLog;
  readonly push: PushSubscriptionStore;
  readonly schedules: RecurringScheduleStore;
  readonly topics: TopicStore;
  /** Statements and transactions sent so far (tests: group commit shares them). */
  get sent(): number {
    return this.pg.sent;
  }
  private readonly pg: PgContext;
  private readonly calls: OpenCalls;

  constructor(parts: PostgresStoreParts) {
    this.pg = parts.pg;
    this.description = parts.description;
    this.horizonMs = parts.horizonMs;
    this.coordination = parts.shared;
    this.calls = new OpenCalls(this.description);
    this.tasks = new PostgresTasks(this.pg, this.coordination, this.calls);
    this.transactional = new PgTransactional(this.pg, channelsOf(this.pg.schema), this.horizonMs, () => this.calls.assertOpen());
    const reader = new StoredRecordReader(this.description, parts.logger);
    const roles = storedRecordRoles({
      push: new PgPushSubscriptions(this.pg, reader),
      schedules: new PgSchedules(this.pg, reader),
      topicPauses: new PgTopicPauses(this.pg, () => parts.clock.now()),
      topicLimits: new PgTopicLimits(this.pg, () => parts.clock.now()),
      flowState: new PgFlowState(this.pg),
      reservedLeases: (topic, now, until) => this.tasks.reservedLeases(topic, now, until),
      assertOpen: () => this.calls.assertOpen(),
    });
    this.push = roles.push;
    this.schedules = roles.schedules;
    this.topics = roles.topics;
    this.eventLog = new PgEventLog(this.pg, EVENT_LOG_RETAIN);
  }

  async close(): Promise<void> {
    if (this.calls.closed) return;
    // Calls already accepted finish before the connections close, not dropped.
    await this.calls.close();
    await this.coordination.stop();
    await this.pg.pool.end();
  }
}
