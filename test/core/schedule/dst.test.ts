/**
 * Cron occurrences across the daylight-saving changes of 2026 and 2027 in Europe/Berlin,
 * America/New_York and Australia/Lord_Howe (a 30-minute shift): table cases for the
 * documented rules (docs/cron.md), the planner driven by a ManualClock through each change,
 * and a property test against a brute-force reference that scans minute by minute with
 * its own Intl.DateTimeFormat.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { ManualClock } from '../../../src/core/manual-clock.js';
import { planDueAt, planOccurrences } from '../../../src/core/schedule/plan.js';
import { compileRule } from '../../../src/core/schedule/rule.js';
import type { RecurringScheduleRecord } from '../../../src/core/schedule/model.js';
import { nextOffsetChange } from '../../../src/core/schedule/zone.js';
import { compileCron } from '../../../src/engine/recurring/cron-pattern.js';

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe'] as const;

function cronRule(cron: string, tz: string): (after: number) => number | null {
  return compileRule({ cron, tz, everyMs: null, startAt: null, endAt: null }, compileCron);
}

function runs(cron: string, tz: string, fromIso: string, n: number): string[] {
  const next = cronRule(cron, tz);
  const out: string[] = [];
  let at: number | null = Date.parse(fromIso);
  while (out.length < n && (at = next(at)) !== null) out.push(new Date(at).toISOString());
  return out;
}

describe('cron across daylight-saving changes (table)', () => {
  const cases: Array<[string, string, string, string[]]> = [
    // Spring forward: the missing wall time fires once, at the first instant after the gap.
    ['30 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', ['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']],
    ['30 2 * * *', 'Europe/Berlin', '2027-03-27T12:00:00Z', ['2027-03-28T01:00:00.000Z', '2027-03-29T00:30:00.000Z']],
    ['30 2 * * *', 'America/New_York', '2026-03-07T12:00:00Z', ['2026-03-08T07:00:00.000Z', '2026-03-09T06:30:00.000Z']],
    ['30 2 * * *', 'America/New_York', '2027-03-13T12:00:00Z', ['2027-03-14T07:00:00.000Z', '2027-03-15T06:30:00.000Z']],
    // Lord Howe jumps 02:00 -> 02:30: 02:15 fires at 02:30 (+11), the day is not skipped.
    ['15 2 * * *', 'Australia/Lord_Howe', '2026-10-03T00:00:00Z', ['2026-10-03T15:30:00.000Z', '2026-10-04T15:15:00.000Z']],
    ['15 2 * * *', 'Australia/Lord_Howe', '2027-10-02T00:00:00Z', ['2027-10-02T15:30:00.000Z', '2027-10-03T15:15:00.000Z']],
    // Several matches in one gap are one occurrence.
    ['*/20 2 * * *', 'Europe/Berlin', '2026-03-28T12:00:00Z', ['2026-03-29T01:00:00.000Z', '2026-03-30T00:00:00.000Z']],
    // Fall back, hour restricted: the repeated wall time fires once, at its first (summer-time) instant.
    ['30 2 * * *', 'Europe/Berlin', '2026-10-24T12:00:00Z', ['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
    ['30 1 * * *', 'America/New_York', '2026-10-31T12:00:00Z', ['2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
    ['30 1 * * *', 'America/New_York', '2027-11-06T12:00:00Z', ['2027-11-07T05:30:00.000Z', '2027-11-08T06:30:00.000Z']],
    ['*/30 1 * * *', 'America/New_York', '2026-11-01T04:00:00Z', ['2026-11-01T05:00:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:00:00.000Z']],
    // Lord Howe falls back 02:00 -> 01:30: 01:45 happens twice, fires once (+11).
    ['45 1 * * *', 'Australia/Lord_Howe', '2026-04-04T00:00:00Z', ['2026-04-04T14:45:00.000Z', '2026-04-05T15:15:00.000Z']],
    ['45 1 * * *', 'Australia/Lord_Howe', '2027-04-03T00:00:00Z', ['2027-04-03T14:45:00.000Z', '2027-04-04T15:15:00.000Z']],
    // Hour field `*`: every real hour, 25 on the fall-back day.
    ['0 * * * *', 'America/New_York', '2026-11-01T04:30:00Z', ['2026-11-01T05:00:00.000Z', '2026-11-01T06:00:00.000Z', '2026-11-01T07:00:00.000Z']],
    ['0 * * * *', 'Europe/Berlin', '2027-10-31T00:30:00Z', ['2027-10-31T01:00:00.000Z', '2027-10-31T02:00:00.000Z']],
    // 6 fields: seconds.
    ['*/20 * * * * *', 'UTC', '2026-01-01T00:00:00Z', ['2026-01-01T00:00:20.000Z', '2026-01-01T00:00:40.000Z', '2026-01-01T00:01:00.000Z']],
  ];
  for (const [cron, tz, from, expected] of cases) {
    it(`${cron} in ${tz} after ${from}`, () => {
      assert.deepEqual(runs(cron, tz, from, expected.length), expected);
    });
  }

  it('counts 25 hourly runs on a fall-back day and 23 on a spring-forward day', () => {
    const count = (from: string, to: string): number => runs('0 * * * *', 'America/New_York', from, 100).filter((t) => t < to).length;
    assert.equal(count('2026-11-01T03:59:59Z', '2026-11-02T04:59:59Z'), 25);
    assert.equal(count('2026-03-08T04:59:59Z', '2026-03-09T03:59:59Z'), 23);
  });
});

const DAY_MS = 86_400_000;

/** Each change of the three zones' offsets in 2026 and 2027. */
const changes: Array<{ tz: string; at: number }> = [];
for (const tz of ZONES) {
  let from = Date.UTC(2026, 0, 1);
  while (from < Date.UTC(2028, 0, 1)) {
    let change: number | null = null;
    for (let probe = from; change === null && probe < Date.UTC(2028, 0, 1); probe += 7 * DAY_MS) change = nextOffsetChange(probe, probe + 7 * DAY_MS, tz);
    if (change === null) break;
    changes.push({ tz, at: change });
    from = change + DAY_MS;
  }
}

function record(cron: string, tz: string, nextAt: number): RecurringScheduleRecord {
  return {
    id: 's', topic: 't', payload: 'null', cron, tz, everyMs: null, startAt: null, endAt: null, limit: null, misfire: 'once',
    ttrMs: 1000, maxAttempts: 1, backoff: { baseMs: 0, factor: 1, maxMs: 0, jitter: 0 },
    paused: false, nextAt, lastAt: null, count: 0, rev: 1, createdAt: 0, updatedAt: 0, url: null, priority: 0,
  };
}

describe('the planner driven by a ManualClock through each change', () => {
  for (const tz of ZONES) {
    for (const year of [2026, 2027]) {
      it(`${tz} ${year}: every occurrence of '*/30 * * * *' and '30 2 * * *' created once, in order, never late`, () => {
        // A week either side of each of the zone's two changes that year.
        const around = changes.filter((c) => c.tz === tz && new Date(c.at).getUTCFullYear() === year);
        assert.equal(around.length, 2);
        for (const [cron, change] of ['*/30 * * * *', '30 2 * * *', '15 1,2 * * *'].flatMap((c) => around.map((a) => [c, a.at] as const))) {
          const next = cronRule(cron, tz);
          const start = change - 7 * DAY_MS;
          const clock = new ManualClock(start);
          let rec = record(cron, tz, next(clock.now() - 1)!);
          const created: number[] = [];
          const end = change + 7 * DAY_MS;
          while (clock.now() < end) {
            const plan = planOccurrences(rec, next, clock.now(), { leadMs: 60_000, graceMs: 1_000 });
            assert.equal(plan.skipped, 0);
            for (const at of plan.create) assert.ok(at >= clock.now(), 'an occurrence created after its time');
            created.push(...plan.create);
            rec = { ...rec, ...plan.state };
            // Wake when the latest created comes within the lead, as the engine does.
            clock.advance(Math.max(1, (planDueAt(rec, clock.now(), 60_000) ?? Infinity) - clock.now()));
          }
          for (let i = 1; i < created.length; i++) assert.ok(created[i]! > created[i - 1]!, 'ascending, no duplicate');
          // Same list as the rule enumerated directly.
          const expected: number[] = [];
          let at: number | null = start - 1;
          while ((at = next(at)) !== null && at <= created[created.length - 1]!) expected.push(at);
          assert.deepEqual(created, expected);
        }
      });
    }
  }
});

// ---------------------------------------------------------------------------------------
// Brute-force reference: minute by minute, own Intl formatter, own field matcher.

interface Fields { minute: Set<number>; hour: Set<number> | null; dow: Set<number> | null }

const refFormats = new Map<string, Intl.DateTimeFormat>();
function refWall(t: number, tz: string): { y: number; mo: number; d: number; h: number; mi: number; dow: number; ms: number } {
  let f = refFormats.get(tz);
  if (!f) refFormats.set(tz, (f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit' })));
  const p = Object.fromEntries(f.formatToParts(t).map((x) => [x.type, x.value]));
  const y = +p['year']!, mo = +p['month']!, d = +p['day']!, h = +p['hour']!, mi = +p['minute']!;
  const ms = Date.UTC(y, mo - 1, d, h, mi);
  return { y, mo, d, h, mi, dow: new Date(ms).getUTCDay(), ms };
}
// The property's runs scan the same minutes around the same changes: each minute's wall time is formatted once.
const refWallMsSeen = new Map<string, Map<number, number>>();
function refWallMs(t: number, tz: string): number {
  let seen = refWallMsSeen.get(tz);
  if (!seen) refWallMsSeen.set(tz, (seen = new Map<number, number>()));
  let ms = seen.get(t);
  if (ms === undefined) seen.set(t, (ms = refWall(t, tz).ms));
  return ms;
}
function matches(f: Fields, wallMs: number): boolean {
  const d = new Date(wallMs);
  return f.minute.has(d.getUTCMinutes()) && (f.hour === null || f.hour.has(d.getUTCHours())) && (f.dow === null || f.dow.has(d.getUTCDay()));
}
function referenceNext(f: Fields, tz: string, after: number, horizonMs: number): number | null {
  for (let t = Math.floor(after / 60_000) * 60_000 + 60_000; t <= after + horizonMs; t += 60_000) {
    const w = refWallMs(t, tz);
    const prev = refWallMs(t - 60_000, tz);
    let fires = false;
    if (matches(f, w)) {
      let repeated = false;
      // A restricted hour field fires a repeated wall time once; `*` (every hour) on each real instant.
      if (f.hour !== null && f.hour.size < 24) for (let s = t - 60_000; s >= t - 3 * 3_600_000 && !repeated; s -= 60_000) repeated = refWallMs(s, tz) === w;
      fires = !repeated;
    }
    for (let g = prev + 60_000; g < w && !fires; g += 60_000) fires = matches(f, g); // a gap just before t
    if (fires) return t;
  }
  return null;
}

const setOf = (values: number[]): Set<number> => new Set(values);
const fieldArb = (max: number): fc.Arbitrary<{ text: string; set: Set<number> }> =>
  fc.oneof(
    fc.integer({ min: 0, max }).map((v) => ({ text: String(v), set: setOf([v]) })),
    fc.uniqueArray(fc.integer({ min: 0, max }), { minLength: 1, maxLength: 4 }).map((vs) => ({ text: vs.join(','), set: setOf(vs) })),
    fc.integer({ min: 1, max: Math.max(1, Math.floor(max / 2)) }).map((s) => ({ text: `*/${s}`, set: setOf(Array.from({ length: max + 1 }, (_, i) => i).filter((i) => i % s === 0)) })),
    fc.tuple(fc.integer({ min: 0, max }), fc.integer({ min: 0, max })).map(([a, b]) => {
      const [lo, hi] = a <= b ? [a, b] : [b, a];
      return { text: `${lo}-${hi}`, set: setOf(Array.from({ length: hi - lo + 1 }, (_, i) => lo + i)) };
    }),
  );

describe('next occurrence: property test against a minute-by-minute reference', () => {
  // Instants near each change of the three zones in 2026 and 2027.
  it('found four changes per zone over 2026-2027', () => {
    for (const tz of ZONES) assert.equal(changes.filter((c) => c.tz === tz).length, 4, tz);
  });

  it('agrees with the reference around every change', () => {
    const arb = fc.record({
      minute: fieldArb(59),
      hour: fc.option(fieldArb(23), { nil: null, freq: 3 }),
      dow: fc.option(fieldArb(6), { nil: null, freq: 2 }),
      change: fc.constantFrom(...changes),
      shift: fc.integer({ min: -5 * 3_600_000, max: 5 * 3_600_000 }),
    });
    fc.assert(
      fc.property(arb, ({ minute, hour, dow, change, shift }) => {
        const cron = `${minute.text} ${hour?.text ?? '*'} * * ${dow?.text ?? '*'}`;
        const fields: Fields = { minute: minute.set, hour: hour?.set ?? null, dow: dow?.set ?? null };
        const after = change.at + shift;
        const horizon = 8 * 86_400_000;
        const expected = referenceNext(fields, change.tz, after, horizon);
        const actual = cronRule(cron, change.tz)(after);
        if (expected === null) assert.ok(actual === null || actual > after + horizon, `${cron} ${change.tz}: got ${actual}`);
        else assert.equal(actual, expected, `${cron} in ${change.tz} after ${new Date(after).toISOString()}`);
      }),
      { numRuns: 150 },
    );
  });
});
