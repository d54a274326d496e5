/**
 * The small interface shared by the timing wheel and its test oracle (the reference
 * timer): a data structure that keeps values until their time and hands them back, in
 * (runAt, insertion) order, when the caller says what time it is. Neither reads a clock.
 */
export interface TimerHandle<T> {
  readonly value: T;
  /** Epoch ms at which the value is due; it is never handed back before this. */
  readonly runAt: number;
  /** Insertion order: breaks ties between equal runAt. */
  readonly seq: number;
}

export interface Timer<T> {
  /**
   * Keeps `value` until `runAt`. Returns the handle, or `undefined` when `runAt` is not
   * after the time the timer was last advanced to: the value is due now and the caller
   * must deliver it itself (the timer never holds an already-due value).
   */
  add(runAt: number, value: T): TimerHandle<T> | undefined;
  /** Forgets a pending value; false if it was already handed back or cancelled. */
  cancel(handle: TimerHandle<T>): boolean;
  /** Moves time to `nowMs` and returns every value due by then, in (runAt, seq) order. */
  advance(nowMs: number): T[];
  /**
   * The earliest time at which `advance` may have something to do, or undefined when
   * nothing is pending. The driver sleeps until then; it may be earlier than the first
   * due value (a coarse bucket that must be split), never later.
   */
  nextDeadline(): number | undefined;
  readonly size: number;
}
