/**
 * A schedule's rule as a function: the first occurrence strictly after an instant, within
 * startAt/endAt. Cron rules go through next.ts (time zones, daylight saving); intervals
 * fall on startAt + k * everyMs (startAt defaulting to the epoch, so `everyMs: 60000` fires
 * on each whole UTC minute, the same on every process and after every restart). No
 * occurrence falls past MAX_TIME_MS: a task's runAt is a time a Date can hold.
 */
import { MAX_TIME_MS } from '../time.js';
import { nextCronOccurrence, type WallPattern } from './next.js';
import type { RecurringScheduleDefinition } from './model.js';

/** Parses a cron pattern; throws an Error whose message is the parser's reason. */
export type CronCompiler = (pattern: string) => WallPattern;

export type NextOccurrence = (after: number) => number | null;

export function compileRule(def: Pick<RecurringScheduleDefinition, 'cron' | 'tz' | 'everyMs' | 'startAt' | 'endAt'>, compile: CronCompiler): NextOccurrence {
  const { startAt, endAt } = def;
  const floor = startAt === null ? -Infinity : startAt - 1;
  let raw: NextOccurrence;
  if (def.cron !== null) {
    const pattern = compile(def.cron);
    const tz = def.tz;
    raw = (after) => nextCronOccurrence(pattern, tz, after);
  } else {
    const every = def.everyMs!;
    const anchor = startAt ?? 0;
    raw = (after) => {
      if (after < anchor) return anchor;
      return anchor + (Math.floor((after - anchor) / every) + 1) * every;
    };
  }
  return (after) => {
    const at = raw(Math.max(after, floor));
    return at === null || at > MAX_TIME_MS || (endAt !== null && at >= endAt) ? null : at;
  };
}
