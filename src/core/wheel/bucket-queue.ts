import type { Bucket } from './bucket.js';

/**
 * A binary min-heap of non-empty buckets keyed by expiration: it drives the wheel's clock
 * (as Kafka's DelayQueue of buckets does), so empty ticks cost nothing. It holds at most
 * levels x slots buckets, never one element per timer.
 */
export class BucketQueue<T> {
  private readonly heap: Bucket<T>[] = [];

  get length(): number {
    return this.heap.length;
  }

  peek(): Bucket<T> | undefined {
    return this.heap[0];
  }

  push(bucket: Bucket<T>): void {
    bucket.heapIndex = this.heap.length;
    this.heap.push(bucket);
    this.up(bucket.heapIndex);
  }

  pop(): Bucket<T> | undefined {
    const top = this.heap[0];
    if (top === undefined) return undefined;
    const last = this.heap.pop()!;
    if (last !== top) {
      this.heap[0] = last;
      last.heapIndex = 0;
      this.down(0);
    }
    top.heapIndex = -1;
    return top;
  }

  /** Removes a bucket from anywhere in the heap (it emptied through cancels). */
  remove(bucket: Bucket<T>): void {
    const i = bucket.heapIndex;
    if (i < 0) return;
    const last = this.heap.pop()!;
    bucket.heapIndex = -1;
    if (last === bucket) return;
    this.heap[i] = last;
    last.heapIndex = i;
    this.down(i);
    this.up(last.heapIndex);
  }

  private up(i: number): void {
    const heap = this.heap;
    const item = heap[i]!;
    while (i > 0) {
      const parentIndex = (i - 1) >> 1;
      const parent = heap[parentIndex]!;
      if (parent.expiration <= item.expiration) break;
      heap[i] = parent;
      parent.heapIndex = i;
      i = parentIndex;
    }
    heap[i] = item;
    item.heapIndex = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const n = heap.length;
    const item = heap[i]!;
    for (;;) {
      const left = 2 * i + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && heap[right]!.expiration < heap[left]!.expiration ? right : left;
      const childBucket = heap[child]!;
      if (childBucket.expiration >= item.expiration) break;
      heap[i] = childBucket;
      childBucket.heapIndex = i;
      i = child;
    }
    heap[i] = item;
    item.heapIndex = i;
  }
}
