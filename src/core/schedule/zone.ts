/**
 * Time-zone arithmetic from the runtime's own tz database (Intl), which is all the core
 * needs: the UTC offset in force at an instant, and where that offset changes.
 *
 * A "wall time" here is the local date and time read as if it were UTC, as epoch ms:
 * 2026-03-29 02:30 in Europe/Berlin is the wall time Date.UTC(2026, 2, 29, 2, 30). An
 * instant t has the wall time t + offset(t); a wall time in a spring-forward gap has no
 * instant, and one in a fall-back overlap has two.
 */

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(tz: string): Intl.DateTimeFormat {
  let format = formats.get(tz);
  if (format === undefined) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(tz, format);
  }
  return format;
}

/** True when the runtime knows `tz` as an IANA time zone (or UTC). */
export function isKnownTimeZone(tz: string): boolean {
  try {
    formatOf(tz);
    return true;
  } catch {
    return false;
  }
}

/** The wall time of instant `t` in `tz`, to the second (the ms of `t` are kept). */
export function wallTime(t: number, tz: string): number {
  if (tz === 'UTC') return t;
  let year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  for (const part of formatOf(tz).formatToParts(t)) {
    switch (part.type) {
      case 'year': year = Number(part.value); break;
      case 'month': month = Number(part.value); break;
      case 'day': day = Number(part.value); break;
      case 'hour': hour = Number(part.value); break;
      case 'minute': minute = Number(part.value); break;
      case 'second': second = Number(part.value); break;
      default: break;
    }
  }
  const ms = ((t % 1000) + 1000) % 1000;
  return Date.UTC(year, month - 1, day, hour, minute, second) + ms;
}

/** The offset (wall time - instant) in force at instant `t`, in ms. */
export function offsetAt(t: number, tz: string): number {
  return tz === 'UTC' ? 0 : wallTime(t, tz) - t;
}

/**
 * The first instant in (from, to] whose offset differs from the offset at `from`, or null
 * when the offset is the same at both ends (the caller keeps the range short enough that
 * no two changes fit in it: real zones change at most a few times a year). Offsets change
 * on whole seconds, so the search runs on seconds.
 */
export function nextOffsetChange(from: number, to: number, tz: string): number | null {
  const start = offsetAt(from, tz);
  if (offsetAt(to, tz) === start) return null;
  let lo = Math.floor(from / 1000); // offset(lo s) === start
  let hi = Math.ceil(to / 1000); // offset(hi s) !== start
  if (offsetAt(lo * 1000, tz) !== start) return Math.max(from + 1, lo * 1000);
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (offsetAt(mid * 1000, tz) === start) lo = mid;
    else hi = mid;
  }
  return hi * 1000;
}
