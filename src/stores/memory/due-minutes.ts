/**
 * Per topic, the pending tasks by minute of runAt: what dueHistogram counts from, so its
 * cost is a lookup per minute asked per topic, not a pass over every task. Kept exact on
 * every move into and out of pending (a map add each: schedule, reserve, cancel...).
 */
import { DUE_HISTOGRAM_GRAIN_MS } from '../../core/due-histogram.js';
import type { DueHistogram, DueHistogramQuery } from '../../core/ports/index.js';

export class DueMinutes {
  private readonly byTopic = new Map<string, Map<number, number>>();

  /** The topic's minutes, which its tasks hold (StoredTask.dueMinutes) so a move needs no lookup. */
  ofTopic(topic: string): Map<number, number> {
    let minutes = this.byTopic.get(topic);
    if (!minutes) this.byTopic.set(topic, (minutes = new Map<number, number>()));
    return minutes;
  }

  histogram(query: DueHistogramQuery): DueHistogram {
    const { from, to, bucketMs, topic } = query;
    const counts = new Array<number>(Math.ceil((to - from) / bucketMs)).fill(0);
    const maps = topic === undefined ? [...this.byTopic.values()] : [this.byTopic.get(topic)].filter((m) => m !== undefined);
    const first = Math.floor(from / DUE_HISTOGRAM_GRAIN_MS);
    const end = Math.ceil(to / DUE_HISTOGRAM_GRAIN_MS);
    const add = (minute: number, n: number): void => void (counts[Math.floor((minute * DUE_HISTOGRAM_GRAIN_MS - from) / bucketMs)]! += n);
    for (const minutes of maps) {
      // Whichever is smaller: the minutes asked, or the minutes the topic has tasks in.
      if (end - first <= minutes.size) {
        for (let minute = first; minute < end; minute++) {
          const n = minutes.get(minute);
          if (n !== undefined) add(minute, n);
        }
      } else {
        for (const [minute, n] of minutes) if (minute >= first && minute < end) add(minute, n);
      }
    }
    return { counts, coveredUntil: to };
  }
}

/** A task of these minutes became pending at `runAt`. */
export function addDue(minutes: Map<number, number>, runAt: number): void {
  const minute = Math.floor(runAt / DUE_HISTOGRAM_GRAIN_MS);
  minutes.set(minute, (minutes.get(minute) ?? 0) + 1);
}

/** A task of these minutes pending at `runAt` left pending (or its runAt). */
export function dropDue(minutes: Map<number, number>, runAt: number): void {
  const minute = Math.floor(runAt / DUE_HISTOGRAM_GRAIN_MS);
  const n = minutes.get(minute) ?? 0;
  if (n <= 1) minutes.delete(minute);
  else minutes.set(minute, n - 1);
}
