/**
 * Which recurring schedules this process plans (RecurringScheduleLoop). On a store one
 * process has to itself: all of them. On a store several processes share (SchedulePlanning):
 * the schedules of the partitions whose lease it holds, once it has re-read them after
 * taking the partition (its copies are as old as its last full read, and the previous owner
 * has moved them since), and those changed through this process lately, until their owner
 * has read the change (ADR 0035).
 */
import type { Clock, Logger, SchedulePlanning, TimerToken } from '../../core/ports/index.js';

/** What the loop does for a takeover: re-reads the schedules of these partitions, then plans. */
export interface TakeoverSteps {
  reread(partitions: ReadonlySet<number>): Promise<void>;
  replan(): void;
}

export class PlanningShare {
  /** Partitions taken and not re-read yet, each with the number of its taking. */
  private readonly taken = new Map<number, number>();
  private takings = 0;
  private takeover: Promise<void> | null = null;
  private takeoverAgain = false;
  private retryTimer: TimerToken | null = null;
  private running = false;
  /** Schedules re-read after a takeover and not planned since: their next plan allows takeoverMs. */
  private readonly catchingUp = new Set<string>();
  /** Schedules changed through this process in partitions it does not own: planned here until then. */
  private readonly adopted = new Map<string, number>();

  constructor(
    private readonly planning: SchedulePlanning | null,
    private readonly context: { readonly clock: Clock; readonly logger: Logger; readonly retryMs: number; readonly adoptMs: number },
    private readonly steps: TakeoverSteps,
  ) {
    planning?.onChange((partition, owned) => this.ownershipChanged(partition, owned));
  }

  start(): void {
    this.running = true;
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.retryTimer !== null) this.context.clock.clearTimer(this.retryTimer);
    this.retryTimer = null;
    await this.takeover;
  }

  /** The partition of a schedule (0 without planning). */
  partitionOf(id: string): number {
    return this.planning?.partitionOf(id) ?? 0;
  }

  /** This process plans the schedule now: it owns its partition (re-read since taken), or changed it here lately. */
  plans(partition: number, id: string, now: number): boolean {
    if (this.planning === null) return true;
    if (this.planning.owns(partition) && !this.taken.has(partition)) return true;
    const until = this.adopted.get(id);
    if (until === undefined) return false;
    if (until > now) return true;
    this.adopted.delete(id);
    return false;
  }

  /** Schedules just changed through this process: the owner reads the change within syncMs, and until then this process plans them. */
  changedHere(changed: readonly { readonly partition: number; readonly id: string }[], now: number): void {
    if (this.planning === null) return;
    const until = now + this.context.adoptMs;
    for (const { partition, id } of changed) if (!this.planning.owns(partition)) this.adopted.set(id, until);
  }

  /** How much older than the grace an occurrence may be and still not count as missed: takeoverMs just after a takeover. */
  extraGraceMs(id: string): number {
    return this.catchingUp.has(id) ? (this.planning?.takeoverMs ?? 0) : 0;
  }

  /** Re-read after a takeover: its next plan allows for the time the partition had no owner. */
  catchUp(id: string): void {
    this.catchingUp.add(id);
  }

  /** Planned (or found with nothing to plan) since its takeover. */
  caughtUp(id: string): void {
    this.catchingUp.delete(id);
  }

  forget(id: string): void {
    this.adopted.delete(id);
    this.catchingUp.delete(id);
  }

  /** A partition given up is left to its new owner; one taken is re-read, then planned. */
  private ownershipChanged(partition: number, owned: boolean): void {
    if (!owned) {
      this.taken.delete(partition);
      return;
    }
    // Before start (or after stop) there is nothing to re-read: start reads every schedule.
    if (!this.running) return;
    this.taken.set(partition, ++this.takings);
    if (this.takeover !== null) {
      this.takeoverAgain = true;
      return;
    }
    this.takeover = this.takeOver()
      .catch((error: unknown) => {
        this.context.logger.error({ err: error }, 'schedules: reading the schedules of a partition taken over failed; retrying');
        if (this.running && this.retryTimer === null)
          this.retryTimer = this.context.clock.setTimer(() => {
            this.retryTimer = null;
            this.again();
          }, this.context.retryMs);
      })
      .finally(() => {
        this.takeover = null;
        if (!this.takeoverAgain) return;
        this.takeoverAgain = false;
        this.again();
      });
  }

  private again(): void {
    const [first] = this.taken;
    if (first !== undefined) this.ownershipChanged(first[0], true);
  }

  private async takeOver(): Promise<void> {
    const taking = new Map(this.taken);
    await this.steps.reread(new Set(taking.keys()));
    // Taken again meanwhile (lost and taken back): read once more.
    for (const [partition, seq] of taking) if (this.taken.get(partition) === seq) this.taken.delete(partition);
    this.steps.replan();
  }
}
