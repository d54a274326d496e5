/** Time, timers and logs: what every part of the engine is handed instead of reading its own. */
/** A clock and one-shot timers. Real: Date.now + setTimeout; tests: a manual clock. */
export interface Clock {
  now(): number;
  /** Calls `callback` once after `delayMs` (which the caller keeps <= 2^31-1). */
  setTimer(callback: () => void, delayMs: number): TimerToken;
  clearTimer(token: TimerToken): void;
}

export type TimerToken = { readonly __timer: unique symbol } | object;

export interface Logger {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}
