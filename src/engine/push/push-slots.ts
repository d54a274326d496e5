/**
 * The process's push slots (`maxInFlight`), shared between the Pusher's consumers by
 * core/fair-share.ts, and the two ways of waiting for one:
 *
 * - A consumer's worker asks `room(key)` before it reserves, and reserves no more tasks
 *   than that; with none it waits in `whenRoom`. Tasks it could not send stay pending in
 *   the store, in their order, and cost nothing while they wait.
 * - A push that finds no slot (its worker reserved while there was room, and another
 *   consumer took it meanwhile) waits in `take`: in its key's line, first come first served
 *   within the key, for at most `maxWaitMs`. A freed slot goes to the waiting key that holds
 *   the fewest, among those under their share.
 *
 * Every release, and every wait that ends without a slot (the key may stop being busy, so
 * the others' shares grow), serves the lines, then wakes the workers that now have room.
 * Timers come from the queue's Clock.
 */
import { FairShare } from '../../core/fair-share.js';
import type { Clock, TimerToken } from '../../core/ports/index.js';

interface Taker {
  readonly key: string;
  readonly resolve: (taken: boolean) => void;
  timer: TimerToken | null;
}

export class PushSlots {
  private readonly share: FairShare;
  /** Pushes waiting for a slot, by key, oldest first. */
  private readonly lines = new Map<string, Taker[]>();
  /** Workers waiting for room, by key. */
  private readonly watchers = new Map<string, Set<() => void>>();
  private closed = false;

  constructor(
    limit: number,
    private readonly clock: Clock,
  ) {
    this.share = new FairShare(limit);
  }

  get limit(): number {
    return this.share.limit;
  }

  /** Slots held now, over every key. */
  get inFlight(): number {
    return this.share.inFlight;
  }

  /** Pushes waiting for a slot now. */
  get queued(): number {
    let queued = 0;
    for (const line of this.lines.values()) queued += line.length;
    return queued;
  }

  held(key: string): number {
    return this.share.held(key);
  }

  /** How many slots `key` may take now. */
  room(key: string): number {
    return this.closed ? 0 : this.share.room(key);
  }

  /** Takes a slot at once, or not at all. */
  tryTake(key: string): boolean {
    return !this.closed && this.share.take(key);
  }

  /** Resolves true with a slot, or false if none came within `maxWaitMs` or the slots closed. */
  take(key: string, maxWaitMs: number): Promise<boolean> {
    if (this.tryTake(key)) return Promise.resolve(true);
    if (this.closed) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      const taker: Taker = { key, resolve, timer: null };
      let line = this.lines.get(key);
      if (line === undefined) this.lines.set(key, (line = []));
      line.push(taker);
      this.share.want(key);
      taker.timer = this.clock.setTimer(() => this.giveUp(taker), maxWaitMs);
    });
  }

  /**
   * Resolves once `key` may have room (a slot was released, or a key stopped waiting), or
   * when `signal` aborts. The key is busy meanwhile, so the others' shares leave it room.
   */
  whenRoom(key: string, signal: AbortSignal): Promise<void> {
    if (signal.aborted || (!this.closed && this.share.room(key) > 0)) return Promise.resolve();
    // Closed: no room will come; the worker is being closed too, so only its signal ends the wait.
    if (this.closed) return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    return new Promise<void>((resolve) => {
      let set = this.watchers.get(key);
      if (set === undefined) this.watchers.set(key, (set = new Set()));
      const watchers = set;
      const wake = (): void => {
        signal.removeEventListener('abort', onAbort);
        watchers.delete(wake);
        if (watchers.size === 0) this.watchers.delete(key);
        this.share.unwant(key);
        resolve();
      };
      const onAbort = (): void => {
        wake();
        this.serve();
      };
      watchers.add(wake);
      this.share.want(key);
      signal.addEventListener('abort', onAbort, { once: true });
    });
  }

  release(key: string): void {
    this.share.release(key);
    this.serve();
  }

  /**
   * Every waiting push gives up and every waiting worker wakes (to wait then for its own
   * close); no slot is given from now on.
   */
  close(): void {
    this.closed = true;
    for (const line of [...this.lines.values()]) for (const taker of [...line]) this.giveUp(taker);
    this.serve();
  }

  private giveUp(taker: Taker): void {
    if (taker.timer !== null) this.clock.clearTimer(taker.timer);
    taker.timer = null;
    if (!this.leaveLine(taker)) return;
    taker.resolve(false);
    this.serve();
  }

  /** Removes a taker from its line; false when it was not in it (already served). */
  private leaveLine(taker: Taker): boolean {
    const line = this.lines.get(taker.key);
    const at = line === undefined ? -1 : line.indexOf(taker);
    if (line === undefined || at < 0) return false;
    line.splice(at, 1);
    if (line.length === 0) this.lines.delete(taker.key);
    this.share.unwant(taker.key);
    return true;
  }

  /** Gives free slots to waiting pushes, fewest held first, then wakes the workers that have room. */
  private serve(): void {
    if (this.lines.size === 0 && this.watchers.size === 0) return;
    if (this.closed) {
      this.wakeAll();
      return;
    }
    for (;;) {
      let next: Taker | undefined;
      let fewest = Number.POSITIVE_INFINITY;
      for (const [key, line] of this.lines) {
        const held = this.share.held(key);
        if (held < fewest && this.share.room(key) > 0) {
          next = line[0];
          fewest = held;
        }
      }
      if (next === undefined) break;
      this.leaveLine(next);
      if (next.timer !== null) this.clock.clearTimer(next.timer);
      next.timer = null;
      this.share.take(next.key);
      next.resolve(true);
    }
    let woke = false;
    for (const [key, set] of [...this.watchers]) {
      if (this.share.room(key) === 0) continue;
      for (const wake of [...set]) wake();
      woke = true;
    }
    // A worker woken stops waiting: if its key is no longer busy, the others' shares grew.
    if (woke && this.lines.size > 0) this.serve();
  }

  private wakeAll(): void {
    for (const set of [...this.watchers.values()]) for (const wake of [...set]) wake();
  }
}
