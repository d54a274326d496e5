/**
 * Coalesces concurrent calls of one kind per shard (acks, cancels, promotions): at most
 * `maxInFlight` script calls per shard are in flight; what callers submit meanwhile goes
 * out together in the next call. An idle shard sends at once (after the current microtask, so calls
 * made in one synchronous burst share a call); under load batches grow by themselves, so
 * Redis runs one script for many tasks instead of one each, without a timer adding delay.
 */
interface Entry<I, O> {
  readonly items: readonly I[];
  readonly resolve: (outputs: O[]) => void;
  readonly reject: (error: unknown) => void;
}

export class ShardBatcher<I, O> {
  private readonly queues = new Map<number, Entry<I, O>[]>();
  private readonly inFlight = new Map<number, number>();
  private readonly scheduled = new Set<number>();

  constructor(
    /** Runs one call for `items` of one shard; returns one output per item, in order. */
    private readonly send: (shard: number, items: I[]) => Promise<O[]>,
    private readonly maxBatch: number,
    private readonly maxInFlight = 1,
  ) {}

  /** Outputs for `items`, in order. A call that fails rejects every submission it carried. */
  submit(shard: number, items: readonly I[]): Promise<O[]> {
    return new Promise<O[]>((resolve, reject) => {
      let queue = this.queues.get(shard);
      if (!queue) this.queues.set(shard, (queue = []));
      queue.push({ items, resolve, reject });
      if (!this.scheduled.has(shard) && (this.inFlight.get(shard) ?? 0) < this.maxInFlight) {
        this.scheduled.add(shard);
        queueMicrotask(() => {
          this.scheduled.delete(shard);
          this.flush(shard);
        });
      }
    });
  }

  private flush(shard: number): void {
    const queue = this.queues.get(shard);
    const running = this.inFlight.get(shard) ?? 0;
    if (!queue || queue.length === 0 || running >= this.maxInFlight) return;
    this.inFlight.set(shard, running + 1);
    const entries: Entry<I, O>[] = [];
    let size = 0;
    while (queue.length > 0 && (entries.length === 0 || size + queue[0]!.items.length <= this.maxBatch)) {
      const entry = queue.shift()!;
      entries.push(entry);
      size += entry.items.length;
    }
    const items = entries.flatMap((e) => e.items);
    this.send(shard, items).then(
      (outputs) => {
        let at = 0;
        for (const entry of entries) {
          entry.resolve(outputs.slice(at, at + entry.items.length));
          at += entry.items.length;
        }
      },
      (error: unknown) => {
        for (const entry of entries) entry.reject(error);
      },
    ).finally(() => {
      this.inFlight.set(shard, (this.inFlight.get(shard) ?? 1) - 1);
      this.flush(shard);
    });
  }
}
