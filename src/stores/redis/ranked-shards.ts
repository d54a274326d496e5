/**
 * Which shards hold ready tasks of a priority above 0, per topic, as this process last
 * learnt it (ADR 0057): from its own promotions, from the ready messages of other processes
 * (a trailing " r"), and from every reserve-ready reply (what the shard has left). A reserve
 * asks those shards first, so a task of a higher priority on one shard is not left behind
 * tasks of another shard it had not asked. A topic that never had such a task has no entry:
 * its reserves plan as before.
 */
export class RankedShards {
  private readonly byTopic = new Map<string, Set<number>>();
  /** Per topic, the shards known to hold ready tasks below priority 0, which reserves leave until no shard has others. */
  private readonly belowByTopic = new Map<string, Set<number>>();
  /** The topics whose shards were read once (probe): messages sent before this process listened are not heard. */
  private readonly probed = new Set<string>();
  /** The topics that ever had tasks of a priority other than 0 in this process's view. */
  private readonly ever = new Set<string>();

  /** Whether `topic` ever had tasks of a priority other than 0 in this process's view (what is kept for it is kept by priority). */
  everRanked(topic: string): boolean {
    return this.ever.has(topic);
  }

  /** Whether `topic`'s shards are to be read once (the first reserve of the topic, or after a reconnect). */
  needsProbe(topic: string): boolean {
    if (this.probed.has(topic)) return false;
    this.probed.add(topic);
    return true;
  }

  /** Shard `shard` holds tasks of `topic` below priority 0 (`has`), or none left. */
  setBelow(topic: string, shard: number, has: boolean): void {
    if (has) this.ever.add(topic);
    mark(this.belowByTopic, topic, shard, has);
  }

  /** The shards known to hold tasks of `topic` below priority 0. */
  below(topic: string): readonly number[] {
    const shards = this.belowByTopic.get(topic);
    return shards === undefined ? [] : [...shards];
  }

  /** Shard `shard` holds tasks of `topic` above priority 0 (`has`), or none left. */
  set(topic: string, shard: number, has: boolean): void {
    if (has) this.ever.add(topic);
    mark(this.byTopic, topic, shard, has);
  }

  /** Whether any shard holds tasks of `topic` below priority 0 (the reserves leave them at first). */
  hasBelow(topic: string): boolean {
    return this.belowByTopic.has(topic);
  }

  /** `flagged` with the shards known to hold tasks above priority 0 first (each keeps its order), or as it is when none do. */
  first(topic: string, flagged: readonly number[]): readonly number[] {
    const shards = this.byTopic.get(topic);
    if (shards === undefined) return flagged;
    return [...flagged.filter((s) => shards.has(s)), ...flagged.filter((s) => !shards.has(s))];
  }

  /** How many of the first shards of `first(topic, ...)` are ranked. */
  count(topic: string, flagged: readonly number[]): number {
    const shards = this.byTopic.get(topic);
    return shards === undefined ? 0 : flagged.filter((s) => shards.has(s)).length;
  }

  /** Forgets everything (messages may have been lost: reserve replies tell it again). */
  clear(): void {
    this.byTopic.clear();
    this.belowByTopic.clear();
    this.probed.clear();
  }
}

function mark(byTopic: Map<string, Set<number>>, topic: string, shard: number, has: boolean): void {
  let shards = byTopic.get(topic);
  if (has) {
    if (shards === undefined) byTopic.set(topic, (shards = new Set()));
    shards.add(shard);
  } else if (shards !== undefined) {
    shards.delete(shard);
    if (shards.size === 0) byTopic.delete(topic);
  }
}
