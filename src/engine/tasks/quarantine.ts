/**
 * Rows the engine cannot read (core/task/undecodable.ts), taken out of delivery: the store
 * moves each to dead with lastError `UNDECODABLE_ROW: <why>` (TaskStore.quarantine), fenced
 * by the reservation that read it, and the reserve or list that met it goes on with the
 * others. Logged at warn, one line a minute with the count since, so a table full of them
 * cannot flood the log. A store without `quarantine` (one written outside this repository)
 * gets the reserved task's attempt failed instead (nack), until it is dead.
 */
import type { ReservedTask, TaskRecord, TimerRef } from '../../core/task/model.js';
import { undecodableError } from '../../core/task/undecodable.js';
import type { LoopContext } from '../loop-context.js';

const WARN_EVERY_MS = 60_000;

export class Quarantine {
  private warnedAt = Number.NEGATIVE_INFINITY;
  private since = 0;

  /** `move`: where the timer of a task retried instead (a store without quarantine) goes. */
  constructor(
    private readonly context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight'>,
    private readonly move: (ref: TimerRef) => void,
  ) {}

  /** A task a reserve returned that cannot be delivered: dead, its reservation the fence. Not awaited by the reserve. */
  reserved(record: ReservedTask, problem: string): void {
    const { store, clock, inFlight } = this.context;
    const error = undecodableError(problem);
    const now = clock.now();
    const receipt = record.receipt ?? '';
    const moved =
      store.tasks.quarantine !== undefined
        ? store.tasks.quarantine([{ id: record.id, receipt, error }], now)
        : store.tasks.nack({ id: record.id, receipt, now, error, delayMs: 0, random: 0 }).then((outcome) => void (outcome.status === 'retrying' && this.move(outcome.ref)));
    void inFlight.track(moved).then(
      () => this.log(record, problem),
      (failure: unknown) => this.context.logger.warn({ err: failure, id: record.id }, 'a task row that cannot be read could not be quarantined; it is delivered again when its reservation runs out'),
    );
  }

  /** A task get or list read that cannot be shown: dead if it was pending or reserved. Never fails the read. */
  async read(record: TaskRecord, problem: string): Promise<void> {
    const { store, clock, inFlight } = this.context;
    if (store.tasks.quarantine === undefined) return this.log(record, problem);
    const receipt = record.state === 'reserved' ? record.receipt : null;
    try {
      await inFlight.track(store.tasks.quarantine([{ id: record.id, receipt, error: undecodableError(problem) }], clock.now()));
      this.log(record, problem);
    } catch (failure) {
      this.context.logger.warn({ err: failure, id: record.id }, 'a task row that cannot be read could not be quarantined');
    }
  }

  private log(record: TaskRecord | ReservedTask, problem: string): void {
    this.since++;
    const now = this.context.clock.now();
    if (now - this.warnedAt < WARN_EVERY_MS) return;
    this.warnedAt = now;
    this.context.logger.warn(
      { id: String(record.id).slice(0, 300), topic: String(record.topic).slice(0, 300), problem, quarantined: this.since },
      `a task row that delayq cannot read (${problem}) is dead now, with lastError UNDECODABLE_ROW; the others are delivered as usual (${this.since} since the last line)`,
    );
    this.since = 0;
  }
}
