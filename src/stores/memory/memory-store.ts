/**
 * The in-memory store: every task in a Map, nothing survives the process. It is the
 * reference implementation of the store port (simple enough to read against the
 * contract) and the fastest store for tests, benchmarks and caches of short-lived work.
 *
 * This class holds the roles and `close`: the tasks role is memory-tasks.ts, the record
 * roles are built by storedRecordRoles (shared/record-roles.ts) over the Maps here.
 */
import { DelayQError } from '../../core/errors.js';
import { FlowLedger } from '../../core/flow/flow-ledger.js';
import type { SharedDispatch, TaskStore } from '../../core/ports/index.js';
import { storedRecordRoles } from '../shared/record-roles.js';
import { MemoryTasks } from './memory-tasks.js';
import { MemoryPushSubscriptions } from './push-subscriptions.js';
import { MemorySchedules } from './recurring-schedules.js';
import { MemoryTopicLimits } from './topic-limits.js';
import { MemoryTopicPauses } from './topic-pauses.js';

export class MemoryStore<Tasks extends MemoryTasks = MemoryTasks> implements TaskStore {
  readonly description = 'memory';
  readonly horizonMs = Number.POSITIVE_INFINITY;
  readonly coordination: SharedDispatch | null = null;
  readonly transactional = null;
  readonly tasks: Tasks;
  readonly push;
  readonly schedules;
  readonly topics;
  private closed = false;

  /**
   * `tasks`: builds the tasks role from the store's open-check; absent, a MemoryTasks. A
   * test that needs a task method to fail or count passes a subclass of MemoryTasks.
   */
  constructor(tasks?: (assertOpen: () => void) => Tasks) {
    const assertOpen = (): void => this.assertOpen();
    this.tasks = tasks === undefined ? (new MemoryTasks(assertOpen) as Tasks) : tasks(assertOpen);
    const roles = storedRecordRoles({
      push: new MemoryPushSubscriptions(), schedules: new MemorySchedules(), flowState: new FlowLedger(),
      topicPauses: new MemoryTopicPauses(), topicLimits: new MemoryTopicLimits(),
      reservedLeases: (topic, now, until) => this.tasks.reservedLeases(topic, now, until), assertOpen,
    });
    this.push = roles.push;
    this.schedules = roles.schedules;
    this.topics = roles.topics;
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private assertOpen(): void {
    if (this.closed) throw new DelayQError('QUEUE_CLOSED', 'the memory store is closed');
  }
}
