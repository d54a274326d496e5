/**
 * Which shards one reserve call on the ready lists asks, and for how many ids each. Shards
 * whose backlog is unknown or long are asked for `share` ids; those known to hold fewer are
 * asked for what they hold, so a call reaches as many shards as it needs to fill `fetch`.
 * With long lists (a burst being drained) that is two shards of 32, few calls of many ids
 * each; with short ones (a steady flow that overflowed a busy consumer) it is every flagged
 * shard in one round trip rather than one round trip per two (ADR 0007).
 *
 *   flagged [3, 5, 7], fetch 64, share 32, backlogs unknown   -> 3: 32, 5: 32
 *   flagged [0, 4, 9], start 2, backlogs 3, 2, 5              -> 9: 5, 0: 3, 4: 2
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
