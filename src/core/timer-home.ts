/** Reading the timer home a run ref carries (stores with `timerHomes`). */
import type { HomedRunRef, TimerHome } from './ports/index.js';
import type { TimerRef } from './task/model.js';

/** The home a run ref of a `TimerHomes` store carries; undefined for any other ref. */
export function homeOf(ref: TimerRef): TimerHome | undefined {
  return (ref as Partial<HomedRunRef>).home;
}
