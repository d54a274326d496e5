import * as hdr from 'hdr-histogram-js';

export interface LatenessSummary {
  /** Deliveries measured since the queue opened. */
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly max: number;
}

/** Lateness of deliveries (delivered at - runAt, ms) in an HDR histogram: constant memory. */
export class LatenessRecorder {
  private readonly histogram = hdr.build({
    lowestDiscernibleValue: 1,
    highestTrackableValue: 3_600_000,
    numberOfSignificantValueDigits: 3,
  });

  record(latenessMs: number): void {
    this.histogram.recordValue(Math.max(0, Math.round(latenessMs)));
  }

  summary(): LatenessSummary {
    const h = this.histogram;
    if (h.totalCount === 0) return { count: 0, p50: 0, p99: 0, p999: 0, max: 0 };
    return {
      count: h.totalCount,
      p50: h.getValueAtPercentile(50),
      p99: h.getValueAtPercentile(99),
      p999: h.getValueAtPercentile(99.9),
      max: h.maxValue,
    };
  }
}
