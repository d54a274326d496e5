/**
 * The copies of the recurring schedules this process holds, each with its compiled rule and
 * its partition: read whole at start and again when the store's schedulesVersion moved,
 * changed at once by this process's own calls, re-read by partition on a takeover, and
 * moved forward by the loop's own swaps. The loop (recurring-loop.ts) plans from them.
 */
import type { Logger, RecurringScheduleStore } from '../../core/ports/index.js';
import { sameRule, type RecurringScheduleDefinition, type RecurringScheduleRecord } from '../../core/schedule/model.js';
import { planDueAt } from '../../core/schedule/plan.js';
import { compileRule, type CronCompiler, type NextOccurrence } from '../../core/schedule/rule.js';
import type { InFlight } from '../in-flight.js';
import type { PlanningShare } from './planning-share.js';

/** Recurring schedules by state (KnownSchedules.countByState). */
export interface RecurringScheduleCounts {
  readonly active: number;
  readonly paused: number;
  readonly ended: number;
}

export interface Entry {
  record: RecurringScheduleRecord;
  readonly next: NextOccurrence;
  /** Its partition (SchedulePlanning.partitionOf); 0 without planning. */
  readonly partition: number;
}

/** Schedules applied between two yields to the event loop on a whole read. */
export const SYNC_SLICE = 500;

export interface KnownSchedulesParams {
  readonly store: RecurringScheduleStore;
  readonly logger: Logger;
  readonly inFlight: InFlight;
  readonly compile: CronCompiler;
  readonly share: PlanningShare;
  /** How far ahead of an occurrence its schedule is planned (scheduleLeadMs). */
  readonly leadMs: number;
}

export class KnownSchedules {
  private readonly entries = new Map<string, Entry>();
  /** The store's schedulesVersion at the last full read (null: none yet). */
  private syncedVersion: string | null = null;
  /** Schedules whose last plan could not create all its occurrences: not planned again before this time. */
  private readonly heldUntil = new Map<string, number>();

  constructor(private readonly params: KnownSchedulesParams) {}

  get(id: string): Entry | undefined {
    return this.entries.get(id);
  }

  values(): IterableIterator<Entry> {
    return this.entries.values();
  }

  /** Holds `record` with its rule, as the newest copy of its schedule. */
  set(record: RecurringScheduleRecord, next: NextOccurrence): Entry {
    const entry: Entry = { record, next, partition: this.params.share.partitionOf(record.id) };
    this.entries.set(record.id, entry);
    return entry;
  }

  /** The rule of a record, compiled once per definition revision. */
  ruleOf(record: RecurringScheduleRecord): NextOccurrence {
    const entry = this.entries.get(record.id);
    if (entry !== undefined && entry.record.rev === record.rev && entry.record.createdAt === record.createdAt) return entry.next;
    return compileRule(record, this.params.compile);
  }

  /** The rule of a definition about to be stored: the compiled one when the loop has this very rule. */
  ruleOfDefinition(def: RecurringScheduleDefinition): NextOccurrence {
    const entry = this.entries.get(def.id);
    if (entry !== undefined && sameRule(entry.record, def)) return entry.next;
    return compileRule(def, this.params.compile);
  }

  forget(id: string): void {
    this.entries.delete(id);
    this.params.share.forget(id);
    this.heldUntil.delete(id);
  }

  /** The schedule's last plan could not create all its occurrences: it is not planned again before `until`. */
  holdUntil(id: string, until: number): void {
    this.heldUntil.set(id, until);
  }

  /** When the entry needs a plan: its own time, or later while its last plan waits out a partition that could not be written. */
  dueAt(entry: Entry, now: number): number | null {
    const at = planDueAt(entry.record, now, this.params.leadMs);
    const held = this.heldUntil.get(entry.record.id);
    if (held === undefined || at === null) return at;
    if (held <= now) {
      this.heldUntil.delete(entry.record.id);
      return at;
    }
    return Math.max(at, held);
  }

  /**
   * The schedules this process knows (read at start and every `syncMs`, changed at once by
   * its own calls) by state: `paused`, `ended` (no next occurrence: endAt or limit reached)
   * or `active`. O(schedules), no store read (the metrics gauge reads it at each scrape).
   */
  countByState(): RecurringScheduleCounts {
    let active = 0;
    let paused = 0;
    let ended = 0;
    for (const { record } of this.entries.values()) {
      if (record.paused) paused++;
      else if (record.nextAt === null) ended++;
      else active++;
    }
    return { active, paused, ended };
  }

  /**
   * Re-reads every schedule when the store's version has moved since the last read: a
   * schedule put, deleted, changed or paused anywhere. The loop's own moves forward leave
   * the version alone, so 10,000 schedules firing every second cost one small read per
   * `syncMs`, not a read and decode of all 10,000 (ADR 0033). A copy of a schedule that
   * another process has moved since is caught up by the swap that fails on it. True if it read.
   */
  async readIfChanged(): Promise<boolean> {
    const { store, inFlight } = this.params;
    // Read before the list: a change landing between the two is read again next time.
    const version = await inFlight.track(store.schedulesVersion());
    if (version === this.syncedVersion) return false;
    // Only the schedules known before the read can have been removed elsewhere: one upserted
    // through this process meanwhile is missing from the read, and stays.
    const known = new Set(this.entries.keys());
    const records = await inFlight.track(store.listSchedules());
    const seen = new Set<string>();
    for (let i = 0; i < records.length; i++) {
      // In slices: 10,000 schedules at once held the event loop for ~100 ms on a slow
      // host, and every delivery due meanwhile waited (ADR 0031).
      if (i > 0 && i % SYNC_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
      const record = records[i]!;
      seen.add(record.id);
      const old = this.entries.get(record.id);
      const sameRule = old !== undefined && old.record.rev === record.rev && old.record.createdAt === record.createdAt;
      // This process's own copy is as new or newer (its swaps since the read): kept.
      if (sameRule && old.record.count >= record.count && old.record.paused === record.paused) continue;
      this.set(record, sameRule ? old.next : this.safeRule(record));
    }
    for (const id of known) if (!seen.has(id)) this.forget(id);
    this.syncedVersion = version;
    return true;
  }

  /** Reads the schedules of `stale` again (swapped by another process, or removed): each is held as stored, or forgotten. */
  async refresh(stale: readonly Entry[]): Promise<void> {
    const { store, inFlight } = this.params;
    for (let i = 0; i < stale.length; i += SYNC_SLICE) {
      const slice = stale.slice(i, i + SYNC_SLICE);
      const stored = await inFlight.track(store.getSchedules(slice.map((entry) => entry.record.id)));
      slice.forEach((entry, j) => {
        const fresh = stored[j] ?? null;
        if (fresh === null) this.forget(entry.record.id);
        else if (this.entries.get(fresh.id) === entry) this.set(fresh, this.ruleOf(fresh));
      });
    }
  }

  /**
   * Re-reads the schedules of partitions just taken over (this process's copies are as old as
   * its last full read: the previous owner has moved them since); each is then planned with
   * the takeover allowance (recurring-loop.ts, its header). Until they are read, no pass plans them from the
   * stale copies (PlanningShare).
   */
  async reread(partitions: ReadonlySet<number>): Promise<void> {
    const stale = [...this.entries.values()].filter((entry) => partitions.has(entry.partition));
    const fresh: (RecurringScheduleRecord | null)[] = [];
    for (let i = 0; i < stale.length; i += SYNC_SLICE)
      fresh.push(...(await this.params.inFlight.track(this.params.store.getSchedules(stale.slice(i, i + SYNC_SLICE).map((entry) => entry.record.id)))));
    stale.forEach((old, i) => {
      const id = old.record.id;
      // Applied through this process meanwhile: its entry is newer than the read.
      if (this.entries.get(id) !== old) return;
      const record = fresh[i] ?? null;
      if (record === null) return this.forget(id);
      const sameRule = old.record.rev === record.rev && old.record.createdAt === record.createdAt;
      this.set(record, sameRule ? old.next : this.safeRule(record));
      this.params.share.catchUp(id);
    });
  }

  /** A stored rule that no longer compiles (a later delayq wrote it) never plans. */
  private safeRule(record: RecurringScheduleRecord): NextOccurrence {
    try {
      return compileRule(record, this.params.compile);
    } catch (error) {
      this.params.logger.error({ err: error, schedule: record.id }, 'schedules: a stored schedule has a rule this delayq cannot read; it is ignored');
      return () => null;
    }
  }
}
