/**
 * The next occurrence of a cron rule in a time zone, with delayq's daylight-saving rules
 * (docs/cron.md):
 *
 * - A wall time that does not exist (a spring-forward gap: Europe/Berlin 2026-03-29 has no
 *   02:00-02:59) fires once, at the first instant after the gap (03:00 CEST). Several
 *   matches inside one gap (`*\/15 2 * * *`) are that one occurrence.
 * - A wall time that happens twice (a fall-back overlap: 02:00-02:59 on 2026-10-25 in
 *   Berlin) fires once, at its first instant (the summer-time one, 02:30 CEST), when the
 *   rule's hour field is restricted (`30 2 * * *`, `*\/10 2 * * *`). A rule whose hour
 *   field is `*` runs on the clock's hours, not on a time of day, so it fires on each real
 *   instant: `0 * * * *` fires 25 times on the fall-back day, like every hour of real time.
 *
 * How: the parser (a `WallPattern`, croner behind src/engine/recurring/cron-pattern.ts) finds wall
 * times that match, as if the zone were UTC; this file maps them to instants. Worked
 * example, `30 2 * * *` in Europe/Berlin after 2026-03-28 12:00Z (offset +1 h): the parser
 * answers wall 2026-03-29 02:30; 02:30 - 1 h = 01:30Z, but the offset at 01:30Z is +2 h, so
 * the wall time has no instant of that offset: the zone changes offset at 01:00Z, the
 * walls 02:00-02:59 are the gap, and the occurrence is the first instant after it, 01:00Z
 * (03:00 CEST).
 *
 * Fast path: far (> 3 h) from any offset change, an instant is its wall time minus one
 * constant offset, so one parser call and four offset reads answer. Near a change, the
 * range is walked one segment of constant offset at a time.
 */
import { nextOffsetChange, offsetAt } from './zone.js';

/** A parsed cron pattern, matched against wall times (see zone.ts). */
export interface WallPattern {
  /** The first matching wall time strictly after `wall`, or null when there is none. */
  nextWall(wall: number): number | null;
  /** True when the hour field allows every hour (`*`): see the header. */
  readonly everyHour: boolean;
}

/** Farther than any daylight-saving shift (the largest is 2 h) and closer than two changes ever are. */
const NEAR_MS = 3 * 3_600_000;

/** The first occurrence of `pattern` in `tz` strictly after instant `after`, or null. */
export function nextCronOccurrence(pattern: WallPattern, tz: string, after: number): number | null {
  if (tz === 'UTC') return pattern.nextWall(after);
  const offset = offsetAt(after, tz);
  const wall = pattern.nextWall(after + offset);
  if (wall === null) return null;
  const t = wall - offset;
  if (offsetAt(t, tz) === offset && offsetAt(after + NEAR_MS, tz) === offset && offsetAt(t - NEAR_MS, tz) === offset) return t;
  return nearChange(pattern, tz, after);
}

function nearChange(pattern: WallPattern, tz: string, after: number): number | null {
  let cur = after; // exclusive: the answer is > cur
  for (let guard = 0; guard < 1_000; guard++) {
    const offset = offsetAt(cur + 1, tz);
    const earlier = offsetAt(cur + 1 - NEAR_MS, tz);
    const start = earlier === offset ? null : nextOffsetChange(cur + 1 - NEAR_MS, cur + 1, tz);
    let lower = cur + offset; // the wall time of cur: matches strictly after it
    if (start !== null && earlier < offset && start > cur) {
      // The segment starts right after cur with a gap: walls [start + earlier, start + offset) have no instant.
      const inGap = pattern.nextWall(start + earlier - 1);
      if (inGap !== null && inGap < start + offset) return start;
    }
    if (start !== null && earlier > offset && !pattern.everyHour) {
      // After a fall-back the repeated walls [start + offset, start + earlier) fired in their first pass.
      lower = Math.max(lower, start + earlier - 1);
    }
    const end = nextOffsetChange(cur + 1, cur + 1 + 2 * NEAR_MS, tz);
    const wall = pattern.nextWall(lower);
    if (wall === null) return null;
    const t = wall - offset;
    if (end === null) return t <= cur + 1 + 2 * NEAR_MS ? t : nextCronOccurrence(pattern, tz, cur + 2 * NEAR_MS);
    if (t < end) return t;
    cur = end - 1;
  }
  throw new Error(`cron: no occurrence found near ${new Date(after).toISOString()} in ${tz}`);
}

/** The first `n` occurrences strictly after `after` (fewer when the rule ends). */
export function nextOccurrences(next: (after: number) => number | null, after: number, n: number): number[] {
  const out: number[] = [];
  let at: number | null = after;
  while (out.length < n) {
    at = next(at);
    if (at === null) break;
    out.push(at);
  }
  return out;
}
