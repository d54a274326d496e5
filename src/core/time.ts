/**
 * Times as callers give them (a task's runAt, a schedule's startAt and endAt, a retry's
 * runAt, a timeline's from and to): epoch ms, a Date, or an ISO 8601 date-time, read into
 * epoch ms. Every ISO text is parsed here, strictly: each field must be in its calendar
 * range, where Date.parse rolls over (2030-02-30 becomes 2 March, 24:00 the next day).
 *
 * The text form is RFC 3339's: `YYYY-MM-DDTHH:MM[:SS[.fraction]]` and `Z` or an offset
 * `±HH:MM` (or `±HHMM`). Worked example: `2030-01-31T23:30:00-01:00` has month 1 (1-12),
 * day 31 (1 to 31 in January), hour 23 (0-23), minute and second 0-59, and an offset of
 * -1 h (hours 0-23, minutes 0-59), so it is 2030-02-01T00:30:00Z; `2030-02-29T00:00:00Z`
 * is refused (2030 is not a leap year), and so is `2030-01-01T24:00:00Z`. A fraction past
 * milliseconds is cut, as Date.parse does.
 */
import { DelayQError } from './errors.js';
import { shown } from './shown.js';

/** A time: epoch ms, a Date, or an ISO 8601 string with a date and time. */
export type TimeInput = number | Date | string;

/** The last instant a JavaScript Date can hold (+275760-09-13): no time past it is taken. */
export const MAX_TIME_MS = 8_640_000_000_000_000;

const ISO_PATTERN = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(?:(Z)|([+-])(\d{2}):?(\d{2}))$/;
const MS_PER_DAY = 86_400_000;

/** Days from 1970-01-01 to a proleptic Gregorian date (month 1-12), for any year. */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  return era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468;
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/** Epoch ms of an ISO 8601 date-time, or null when it is not one or a field is out of range. */
export function parseIsoDateTime(text: string): number | null {
  const m = ISO_PATTERN.exec(text);
  if (m === null) return null;
  const [, y, mo, d, h, mi, s = '0', fraction = '', zulu, sign, oh = '0', om = '0'] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  const offsetHours = Number(oh);
  const offsetMinutes = Number(om);
  if (offsetHours > 23 || offsetMinutes > 59) return null;
  const offset = zulu === undefined ? (sign === '-' ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000 : 0;
  const ms = Number(fraction.padEnd(3, '0').slice(0, 3));
  return daysFromCivil(year, month, day) * MS_PER_DAY + ((hour * 60 + minute) * 60 + second) * 1000 + ms - offset;
}

function fail(field: string, problem: string, value: unknown): never {
  throw new DelayQError('INVALID_DELAY', `${field}: ${problem} (got ${shown(value)})`, { field });
}

/**
 * Parses a time given as epoch ms, a Date or an ISO 8601 string into epoch ms, from 0 to
 * MAX_TIME_MS. Throws INVALID_DELAY naming `field`; callers with another code for the
 * field (a schedule's INVALID_SCHEDULE) rethrow it under theirs.
 */
export function parseTime(value: unknown, field = 'runAt'): number {
  let ms: number;
  if (typeof value === 'number') ms = value;
  else if (value instanceof Date) ms = value.getTime();
  else if (typeof value === 'string') {
    const parsed = parseIsoDateTime(value);
    if (parsed === null) fail(field, 'must be epoch ms or an ISO 8601 date-time with every field in range (e.g. 2030-01-31T09:00:00Z)', value);
    ms = parsed;
  } else fail(field, 'must be epoch ms, a Date or an ISO 8601 string', value);
  if (!Number.isFinite(ms)) fail(field, 'is not a valid time', value);
  if (!Number.isInteger(ms) || ms < 0) fail(field, 'must be a whole, non-negative number of ms', ms);
  if (ms > MAX_TIME_MS) fail(field, `must be at most ${MAX_TIME_MS} (the latest time a Date can hold)`, ms);
  return ms;
}
