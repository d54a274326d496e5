/**
 * The benchmark's sustained_high_load cell: 1.5x what the host sustains, measured in the same
 * round (cells.ts measureCapacity: the load raised past it for a while, the completions/s of
 * its second half), offered through the stress; outside it, the cell's rate, at most half the
 * capacity. A backlog grows through the stress at the excess; recovery is judged once it is
 * worked off (it takes about backlog / (capacity - rate), which the notes give beside it).
 */
import { cellScenarios, type Cell } from '../cells.js';

const FACTOR = 1.5;

const cell: Cell = {
  name: 'pg-overload',
  title: '1.5x what the host sustains',
  faults: (run) => `${FACTOR}x the completions/s measured in the round offered for ${run.short ? 8 : 30} s`,
  durations: (run) => (run.short ? { baselineMs: 6_000, stressMs: 8_000, recoveryMs: 20_000 } : { baselineMs: 20_000, stressMs: 30_000, recoveryMs: 60_000 }),
  rate: () => 1_000,
  overload: true,
  async start(ctx) {
    const offered = Math.round(FACTOR * (ctx.capacity ?? 0));
    ctx.setRate(offered);
    return {
      async stop() {
        ctx.setRate(ctx.baseRate);
        return [`offered ${offered.toLocaleString('en-US')}/s (${FACTOR}x ${(ctx.capacity ?? 0).toLocaleString('en-US')}) through the stress`];
      },
    };
  },
};

export const [pgOverloadScenario, pgbossOverloadScenario] = cellScenarios(cell);
