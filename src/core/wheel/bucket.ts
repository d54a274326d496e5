import type { TimerEntry } from './timer-entry.js';

/**
 * One slot of one level of the wheel: a doubly linked list of entries that share an
 * expiration (the first tick of the slot's span). A bucket is reused for later spans once
 * it has been flushed; `expiration` is -1 while it is empty and out of the bucket queue.
 */
export class Bucket<T> {
  head: TimerEntry<T> | null = null;
  tail: TimerEntry<T> | null = null;
  count = 0;
  expiration = -1;
  /** Position in the bucket queue (a heap), -1 when not queued. */
  heapIndex = -1;

  constructor(readonly level: number) {}

  append(entry: TimerEntry<T>): void {
    entry.bucket = this;
    entry.prev = this.tail;
    entry.next = null;
    if (this.tail) this.tail.next = entry;
    else this.head = entry;
    this.tail = entry;
    this.count++;
  }

  remove(entry: TimerEntry<T>): void {
    if (entry.prev) entry.prev.next = entry.next;
    else this.head = entry.next;
    if (entry.next) entry.next.prev = entry.prev;
    else this.tail = entry.prev;
    entry.prev = entry.next = null;
    entry.bucket = null;
    this.count--;
  }

  /**
   * Empties the bucket and returns the head of its list; the entries keep their `next`
   * links (so the caller can walk them) but no longer belong to a bucket.
   */
  detach(): TimerEntry<T> | null {
    const head = this.head;
    for (let e = head; e !== null; e = e.next) {
      e.prev = null;
      e.bucket = null;
    }
    this.head = this.tail = null;
    this.count = 0;
    this.expiration = -1;
    return head;
  }
}
