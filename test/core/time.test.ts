/**
 * The strict reading of times (src/core/time.ts). Property tests: every instant from 1970 to
 * 9999 round-trips through its ISO text; a text with each field in range, any offset, reads
 * as Date.parse reads it; a text with one field out of its range is refused, where
 * Date.parse would roll it over into another day.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDelayQError } from '../../src/core/errors.js';
import { MAX_TIME_MS, daysInMonth, parseIsoDateTime, parseTime } from '../../src/core/time.js';

const YEAR_9999_END = Date.UTC(9999, 11, 31, 23, 59, 59, 999);
const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

interface Fields {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  fraction: string;
  /** null: Z; else the offset's sign, hours and minutes. */
  offset: { sign: '+' | '-'; hours: number; minutes: number; colon: boolean } | null;
}

function text(f: Fields): string {
  const zone = f.offset === null ? 'Z' : `${f.offset.sign}${pad(f.offset.hours)}${f.offset.colon ? ':' : ''}${pad(f.offset.minutes)}`;
  return `${pad(f.year, 4)}-${pad(f.month)}-${pad(f.day)}T${pad(f.hour)}:${pad(f.minute)}:${pad(f.second)}${f.fraction === '' ? '' : `.${f.fraction}`}${zone}`;
}

// Years from 1971 so that no offset takes a valid text before the epoch.
const validFields: fc.Arbitrary<Fields> = fc
  .record({
    year: fc.integer({ min: 1971, max: 9998 }),
    month: fc.integer({ min: 1, max: 12 }),
    dayPick: fc.nat(),
    hour: fc.integer({ min: 0, max: 23 }),
    minute: fc.integer({ min: 0, max: 59 }),
    second: fc.integer({ min: 0, max: 59 }),
    fraction: fc.tuple(fc.integer({ min: 0, max: 9 }), fc.integer({ min: 0, max: 999_999_999 })).map(([digits, n]) => String(n).padStart(9, '0').slice(0, digits)),
    offset: fc.option(
      fc.record({ sign: fc.constantFrom('+' as const, '-' as const), hours: fc.integer({ min: 0, max: 23 }), minutes: fc.integer({ min: 0, max: 59 }), colon: fc.boolean() }),
      { nil: null },
    ),
  })
  .map(({ dayPick, ...f }) => ({ ...f, day: (dayPick % daysInMonth(f.year, f.month)) + 1 }));

type Breakable = 'month' | 'day' | 'hour' | 'minute' | 'second' | 'offsetHours' | 'offsetMinutes';

/** Valid fields with exactly one pushed out of its range (still two digits, so the shape is right). */
const impossibleFields: fc.Arbitrary<{ fields: Fields; broken: Breakable }> = fc
  .tuple(validFields, fc.constantFrom<Breakable>('month', 'day', 'hour', 'minute', 'second', 'offsetHours', 'offsetMinutes'), fc.nat({ max: 99 }))
  .map(([f, broken, n]) => {
    const fields = { ...f, offset: f.offset === null ? null : { ...f.offset } };
    const over = (min: number): number => min + (n % (100 - min));
    switch (broken) {
      case 'month':
        fields.month = n % 2 === 0 ? 0 : over(13);
        break;
      case 'day':
        fields.day = n % 2 === 0 ? 0 : over(daysInMonth(f.year, f.month) + 1);
        break;
      case 'hour':
        fields.hour = over(24);
        break;
      case 'minute':
        fields.minute = over(60);
        break;
      case 'second':
        fields.second = over(60);
        break;
      case 'offsetHours':
        fields.offset = { sign: '+', minutes: 0, colon: true, ...fields.offset, hours: over(24) };
        break;
      case 'offsetMinutes':
        fields.offset = { sign: '-', hours: 1, colon: true, ...fields.offset, minutes: over(60) };
        break;
    }
    return { fields, broken };
  });

describe('parseIsoDateTime: strict ISO 8601', () => {
  it('every instant from 1970 to 9999 round-trips through toISOString', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: YEAR_9999_END }), (ms) => {
        const iso = new Date(ms).toISOString();
        assert.equal(parseIsoDateTime(iso), ms, iso);
        assert.equal(parseTime(iso), ms);
      }),
      { numRuns: 2_000 },
    );
  });

  it('a text with every field in range reads as Date.parse reads it (offsets and fractions too)', () => {
    fc.assert(
      fc.property(validFields, (f) => {
        const iso = text(f);
        assert.equal(parseIsoDateTime(iso), Date.parse(iso), iso);
      }),
      { numRuns: 2_000 },
    );
  });

  it('a text with one field out of range is refused (INVALID_DELAY), where Date.parse may roll it over', () => {
    fc.assert(
      fc.property(impossibleFields, ({ fields, broken }) => {
        const iso = text(fields);
        assert.equal(parseIsoDateTime(iso), null, `${iso} (${broken})`);
        assert.throws(() => parseTime(iso, 'runAt'), (e: unknown) => isDelayQError(e, 'INVALID_DELAY') && e.message.startsWith('runAt: '));
      }),
      { numRuns: 2_000 },
    );
  });

  const examples: Array<[string, number | null]> = [
    ['2030-02-30T00:00:00Z', null],
    ['2030-02-29T00:00:00Z', null],
    ['2028-02-29T00:00:00Z', Date.UTC(2028, 1, 29)],
    ['2100-02-29T12:00:00Z', null],
    ['2000-02-29T12:00:00Z', Date.UTC(2000, 1, 29, 12)],
    ['2030-04-31T00:00:00Z', null],
    ['2030-13-01T00:00:00Z', null],
    ['2030-00-10T00:00:00Z', null],
    ['2030-01-00T00:00:00Z', null],
    ['2030-01-01T24:00:00Z', null],
    ['2030-01-01T23:60:00Z', null],
    ['2030-01-01T23:59:60Z', null],
    ['2030-01-01T00:00:00+24:00', null],
    ['2030-01-01T00:00:00+01:60', null],
    ['2030-01-31T23:30:00-01:00', Date.UTC(2030, 1, 1, 0, 30)],
    ['2030-01-01T09:00+0100', Date.UTC(2030, 0, 1, 8)],
    ['2030-01-01T00:00:00.1239Z', Date.UTC(2030, 0, 1, 0, 0, 0, 123)],
    ['1969-12-31T23:30:00-01:00', Date.UTC(1970, 0, 1, 0, 30)],
    ['2030-01-01', null],
    ['2030-01-01 00:00:00Z', null],
    ['2030-01-01t00:00:00z', null],
    ['tomorrow', null],
    ['', null],
  ];
  for (const [iso, expected] of examples) {
    it(`${JSON.stringify(iso)} -> ${expected === null ? 'refused' : new Date(expected).toISOString()}`, () => assert.equal(parseIsoDateTime(iso), expected));
  }

  it('years before 100 are not read as 19xx (Date.UTC would)', () => {
    const ms = parseIsoDateTime('0099-12-31T00:00:00Z');
    assert.equal(ms, new Date('0099-12-31T00:00:00Z').getTime());
    assert.ok(ms !== null && ms < 0);
    assert.throws(() => parseTime('0099-12-31T00:00:00Z'), (e: unknown) => isDelayQError(e, 'INVALID_DELAY'));
  });

  it('a long text fails at once, and the message shows only its start', () => {
    const huge = `2030-01-01T00:00:00Z${'0'.repeat(1_000_000)}`;
    const started = performance.now();
    assert.throws(() => parseTime(huge, 'startAt'), (e: unknown) => isDelayQError(e, 'INVALID_DELAY') && e.message.length < 300);
    assert.ok(performance.now() - started < 100);
  });
});

describe('parseTime: the range a Date can hold', () => {
  it('takes 0 and MAX_TIME_MS, refuses below 0, above MAX_TIME_MS (1e20), fractions, NaN and invalid Dates', () => {
    assert.equal(parseTime(0), 0);
    assert.equal(parseTime(MAX_TIME_MS), MAX_TIME_MS);
    assert.equal(parseTime(new Date(MAX_TIME_MS)), MAX_TIME_MS);
    for (const bad of [-1, MAX_TIME_MS + 1, 1e20, Number.MAX_SAFE_INTEGER, 1.5, Number.NaN, Infinity, new Date(Number.NaN), true, null, {}]) {
      assert.throws(() => parseTime(bad, 'endAt'), (e: unknown) => isDelayQError(e, 'INVALID_DELAY') && e.message.startsWith('endAt: '), JSON.stringify(bad));
    }
  });
});
