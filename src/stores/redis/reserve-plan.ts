/**
 * Which shards one reserve from the ready lists asks, and for how many ids each. Shards
 * whose backlog is unknown or long are asked for `share` ids; those known to hold fewer are
 * asked for what they hold, so a call reaches as many shards as it needs to fill `fetch`.
 * With long lists (a burst being drained) that is two shards of 32, few calls of many ids
 * each; with short ones (a steady flow that overflowed a busy consumer) it is every flagged
 * shard in one round trip rather than two per round trip, which left such tasks waiting
 * ~25-30 ms at the median.
 */
export interface ReserveStep {
  readonly shard: number;
  readonly count: number;
}

export function planReserveSteps(
  /** Shards that may hold ready ids, in the order they were flagged. */
  flagged: readonly number[],
  /** Where to start among them (rotates between calls so that none is left behind). */
  start: number,
  fetch: number,
  share: number,
  backlogOf: (shard: number) => number | undefined,
): ReserveStep[] {
  const steps: ReserveStep[] = [];
  let planned = 0;
  for (let i = 0; i < flagged.length && planned < fetch; i++) {
    const shard = flagged[(start + i) % flagged.length]!;
    const known = backlogOf(shard);
    const count = Math.min(fetch - planned, Math.max(1, Math.min(known ?? share, share)));
    steps.push({ shard, count });
    planned += count;
  }
  return steps;
}
