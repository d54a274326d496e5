/**
 * The schedulers the wheel is measured against. Neither is used by delayq itself.
 */

interface HeapNode<T> {
  at: number;
  seq: number;
  value: T;
  index: number;
}

/** A binary min-heap timer keyed by (at, seq), with index tracking for O(log n) removal. */
export class HeapTimer<T> {
  private readonly heap: HeapNode<T>[] = [];
  private seq = 0;

  get size(): number {
    return this.heap.length;
  }

  add(at: number, value: T): HeapNode<T> {
    const node: HeapNode<T> = { at, seq: this.seq++, value, index: this.heap.length };
    this.heap.push(node);
    this.up(node.index);
    return node;
  }

  remove(node: HeapNode<T>): void {
    const i = node.index;
    if (i < 0) return;
    const last = this.heap.pop()!;
    node.index = -1;
    if (last === node) return;
    this.heap[i] = last;
    last.index = i;
    this.down(i);
    this.up(last.index);
  }

  peekAt(): number | undefined {
    return this.heap[0]?.at;
  }

  popDue(now: number, out: T[]): void {
    while (this.heap.length > 0 && this.heap[0]!.at <= now) {
      const top = this.heap[0]!;
      this.remove(top);
      out.push(top.value);
    }
  }

  private less(a: HeapNode<T>, b: HeapNode<T>): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private up(i: number): void {
    const h = this.heap;
    const node = h[i]!;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.less(node, h[p]!)) break;
      h[i] = h[p]!;
      h[i]!.index = i;
      i = p;
    }
    h[i] = node;
    node.index = i;
  }

  private down(i: number): void {
    const h = this.heap;
    const n = h.length;
    const node = h[i]!;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      const c = r < n && this.less(h[r]!, h[l]!) ? r : l;
      if (!this.less(h[c]!, node)) break;
      h[i] = h[c]!;
      h[i]!.index = i;
      i = c;
    }
    h[i] = node;
    node.index = i;
  }
}

interface RoundsEntry<T> {
  rounds: number;
  value: T;
}

/**
 * The seeds' design: one ring of slots, each entry carrying the revolutions (cycle_num) it
 * must still wait. Every tick visits its slot and decrements every entry in it, so it cannot
 * skip empty ticks and touches far-future entries once per revolution.
 */
export class RoundsWheel<T> {
  private readonly slots: RoundsEntry<T>[][];
  private cursor = 0;
  private tick: number;
  touched = 0;

  constructor(
    startMs: number,
    private readonly size = 4_096,
  ) {
    this.slots = Array.from({ length: size }, () => []);
    this.tick = startMs;
  }

  add(at: number, value: T): void {
    const delay = Math.max(1, at - this.tick);
    const slot = (this.cursor + delay) % this.size;
    this.slots[slot]!.push({ rounds: Math.floor((delay - 1) / this.size), value });
  }

  /** One tick: advance the cursor and handle its slot. */
  step(out: T[]): void {
    this.cursor = (this.cursor + 1) % this.size;
    this.tick++;
    const slot = this.slots[this.cursor]!;
    if (slot.length === 0) return;
    const keep: RoundsEntry<T>[] = [];
    for (const entry of slot) {
      this.touched++;
      if (entry.rounds === 0) out.push(entry.value);
      else {
        entry.rounds--;
        keep.push(entry);
      }
    }
    this.slots[this.cursor] = keep;
  }
}
