/**
 * croner behind the core's WallPattern (src/core/schedule/next.ts): the pattern is matched
 * against wall times, as if the zone were UTC, and the core maps wall times to instants
 * with its own daylight-saving rules. croner is pinned; docs/adr/0023-croner-for-cron.md
 * says why croner and not cron-parser.
 *
 * Patterns: 5 fields (minute precision) or 6 (seconds first); names (JAN, MON), ranges,
 * lists, steps, `L` (last day of month), `#` (nth weekday), `W`, and the nicknames
 * @yearly, @monthly, @weekly, @daily, @hourly. Day-of-month and day-of-week combine with
 * OR, as in Vixie cron.
 */
import { Cron, CronPattern } from 'croner';
import type { WallPattern } from '../../core/schedule/next.js';

const MODE = '5-or-6-parts';

class CronerPattern implements WallPattern {
  private readonly cron: Cron;
  readonly everyHour: boolean;

  constructor(pattern: string) {
    this.cron = new Cron(pattern, { timezone: 'UTC', mode: MODE, paused: true });
    const parsed = new CronPattern(pattern, 'UTC', { mode: MODE });
    this.everyHour = parsed.hour.every((h) => h !== 0);
  }

  nextWall(wall: number): number | null {
    // croner answers in whole seconds, strictly after its argument.
    return this.cron.nextRun(new Date(wall))?.getTime() ?? null;
  }
}

/** Parsed patterns by text: an upsert checks and plans the same pattern several times, and many schedules share a few patterns. */
const cache = new Map<string, WallPattern>();
const CACHE_SIZE = 1_000;

/** Parses `pattern`; throws croner's own message when it is not a valid pattern. */
export function compileCron(pattern: string): WallPattern {
  let compiled = cache.get(pattern);
  if (compiled === undefined) {
    compiled = new CronerPattern(pattern);
    // Dropped whole when full: cheaper than an LRU, and a miss only costs a parse.
    if (cache.size >= CACHE_SIZE) cache.clear();
    cache.set(pattern, compiled);
  }
  return compiled;
}
