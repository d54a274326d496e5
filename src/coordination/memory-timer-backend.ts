/**
 * A store's pending run timers and its timers channel in this process's memory: the
 * RemoteTimerBackend contract (remote-timers.ts) with no I/O, for the remote timer
 * conformance suite (src/testing/remote-timer-conformance.ts) on a ManualClock. The
 * backing is the one store; `backing.backend(receive)` hands out a view per process, whose
 * `publish` reaches every view's `receive` (its own too, as a Redis subscriber or a
 * PostgreSQL LISTEN hears its own process), after the publisher's turn, never inside it.
 *
 * `delivers: false` makes it polling-only: `publish` is accepted and reaches no one (a
 * PostgreSQL pool behind a transaction pooler, whose NOTIFYs never reach a LISTEN), so a
 * shard's timers reach its owner only through loads.
 */
import type { TimerRef } from '../core/task/model.js';
import type { DuePageRequest, RemoteTimerBackend } from './remote-timers.js';
import { shardOf } from './router.js';

/** A pending task's timer, as a producer writes it; the backing gives it its seq. */
export interface PendingTimer {
  readonly id: string;
  readonly topic: string;
  readonly dueAt: number;
}

const byDue = (a: TimerRef, b: TimerRef): number => a.dueAt - b.dueAt || a.seq - b.seq;

export class MemoryTimerBacking {
  /** Per shard, its pending timers in (dueAt, seq) order. */
  private readonly byShard: TimerRef[][];
  private readonly receivers: ((message: string) => void)[] = [];
  private seq = 0;

  constructor(
    readonly shards: number,
    /** Whether a published message reaches the views (false: a polling-only backing). */
    readonly delivers = true,
  ) {
    this.byShard = Array.from({ length: shards }, () => []);
  }

  /** A view of the backing, as one process's connection would be; `receive` hears the timers channel. */
  backend(receive?: (message: string) => void): RemoteTimerBackend {
    if (receive !== undefined) this.receivers.push(receive);
    return {
      shards: this.shards,
      publish: (lines) => {
        if (lines.length > 0) this.send(lines.join('\n'));
      },
      loadDuePage: async (request) => this.page(request),
    };
  }

  /** Pending timers written (a producer's committed schedule); an id written again moves its timer. */
  add(timers: readonly PendingTimer[]): void {
    for (const { id, topic, dueAt } of timers) {
      const shard = this.byShard[shardOf(id, this.shards)]!;
      const at = shard.findIndex((ref) => ref.id === id);
      if (at >= 0) shard.splice(at, 1);
      shard.push({ id, topic, kind: 'run', dueAt, seq: ++this.seq, receipt: null });
      shard.sort(byDue);
    }
  }

  /** A message on the timers channel as it is, as any client of the store could send one. */
  send(message: string): void {
    if (!this.delivers) return;
    const receivers = [...this.receivers];
    queueMicrotask(() => {
      for (const receive of receivers) receive(message);
    });
  }

  private page({ shard, until, after, limit }: DuePageRequest): TimerRef[] {
    const timers = this.byShard[shard];
    if (timers === undefined) throw new RangeError(`no shard ${shard} of ${this.shards}`);
    const out: TimerRef[] = [];
    for (const ref of timers) {
      if (out.length >= limit || ref.dueAt >= until) break;
      if (after !== null && (ref.dueAt < after.dueAt || (ref.dueAt === after.dueAt && ref.seq <= after.seq))) continue;
      out.push({ ...ref });
    }
    return out;
  }
}
