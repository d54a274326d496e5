/**
 * The bounds of a schedule definition (src/core/schedule/validate.ts), which every route and
 * the library share: string lengths checked before anything parses them, times a Date can
 * hold read strictly, and an occurrence from now on.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { isDelayQError } from '../../../src/core/errors.js';
import { MAX_CRON_LENGTH, MAX_TZ_LENGTH } from '../../../src/core/schedule/model.js';
import { compileRule } from '../../../src/core/schedule/rule.js';
import { validateRecurring } from '../../../src/core/schedule/validate.js';
import { MAX_TIME_MS } from '../../../src/core/time.js';
import { compileCron } from '../../../src/engine/recurring/cron-pattern.js';

const NOW = Date.UTC(2030, 0, 1, 12);
const refused = (input: unknown, says: string | RegExp, code = 'INVALID_SCHEDULE') => (e: unknown): boolean =>
  isDelayQError(e) && e.code === code && (typeof says === 'string' ? e.message.includes(says) : says.test(e.message)) && e.message.length < 400 ? true : assert.fail(`${JSON.stringify(input).slice(0, 80)}: ${String(e)}`);

describe('validateRecurring: lengths before parsing', () => {
  it(`a cron pattern over ${MAX_CRON_LENGTH} characters is refused before the parser sees it (28 MB in well under a second)`, () => {
    const started = performance.now();
    const huge = `0 0 * * ${'MON,'.repeat(7_000_000)}MON`;
    assert.throws(() => validateRecurring('s', { topic: 't', cron: huge }, compileCron, NOW), refused('huge', `at most ${MAX_CRON_LENGTH} characters`));
    assert.ok(performance.now() - started < 1_000, `${performance.now() - started} ms`);
    const justOver = `0 0 1 1 ${' '.repeat(MAX_CRON_LENGTH - 8)}*`;
    assert.equal(justOver.length, MAX_CRON_LENGTH + 1);
    assert.throws(() => validateRecurring('s', { topic: 't', cron: justOver }, compileCron, NOW), refused(justOver, 'cron: must be at most'));
    const longest = `0 0 1 1 ${' '.repeat(MAX_CRON_LENGTH - 9)}*`;
    assert.equal(validateRecurring('s', { topic: 't', cron: longest }, compileCron, NOW).cron, '0 0 1 1 *');
  });

  it(`a time zone over ${MAX_TZ_LENGTH} characters, and huge startAt/misfire/everyMs/limit/unknown-key values, are refused with short messages`, () => {
    const big = 'x'.repeat(5_000_000);
    const cases: Array<[unknown, string | RegExp, string?]> = [
      [{ topic: 't', cron: '* * * * *', tz: `Europe/${big}` }, `tz: must be at most ${MAX_TZ_LENGTH} characters`],
      [{ topic: 't', everyMs: 1000, startAt: big }, /^startAt: must be epoch ms or an ISO 8601/],
      [{ topic: 't', everyMs: 1000, endAt: `2030-01-01T00:00:00Z${big}` }, /^endAt: must be epoch ms or an ISO 8601/],
      [{ topic: 't', everyMs: 1000, misfire: big }, /^misfire: must be one of/],
      [{ topic: 't', everyMs: big }, /^everyMs: must be an integer/],
      [{ topic: 't', everyMs: 1000, limit: big }, /^limit: must be an integer/],
      [{ topic: 't', everyMs: 1000, [big]: 1 }, /^schedule\.x{40}\.\.\.: unknown field$/, 'INVALID_ARGUMENT'],
    ];
    for (const [input, says, code] of cases) assert.throws(() => validateRecurring('s', input, compileCron, NOW), refused(input, says, code));
  });
});

describe('validateRecurring: startAt and endAt', () => {
  it('refuses impossible calendar dates (INVALID_SCHEDULE naming the field), takes possible ones', () => {
    for (const [field, value] of [['startAt', '2031-02-29T00:00:00Z'], ['endAt', '2031-04-31T00:00:00Z'], ['startAt', '2031-01-01T24:00:00Z'], ['endAt', '2031-01-01T00:00:00+25:00']] as const)
      assert.throws(() => validateRecurring('s', { topic: 't', everyMs: 1000, [field]: value }, compileCron, NOW), refused(value, new RegExp(`^${field}: `)));
    const def = validateRecurring('s', { topic: 't', everyMs: 1000, startAt: '2032-02-29T00:00:00Z', endAt: '2032-03-01T00:00:00+01:00' }, compileCron, NOW);
    assert.deepEqual([def.startAt, def.endAt], [Date.UTC(2032, 1, 29), Date.UTC(2032, 1, 29, 23)]);
  });

  it('refuses a startAt or endAt outside the range a Date holds (1e20, MAX_TIME_MS + 1), takes MAX_TIME_MS', () => {
    for (const [field, value] of [['startAt', 1e20], ['endAt', 1e20], ['startAt', MAX_TIME_MS + 1], ['endAt', Number.MAX_SAFE_INTEGER], ['startAt', -1]] as const)
      assert.throws(() => validateRecurring('s', { topic: 't', everyMs: 1000, [field]: value }, compileCron, NOW), refused(value, new RegExp(`^${field}: `)));
    assert.equal(validateRecurring('s', { topic: 't', everyMs: 1000, endAt: MAX_TIME_MS }, compileCron, NOW).endAt, MAX_TIME_MS);
  });

  it('no occurrence falls past MAX_TIME_MS, so a rule that would place one there has none', () => {
    const rule = compileRule({ cron: null, tz: 'UTC', everyMs: 1000, startAt: MAX_TIME_MS - 500, endAt: null }, compileCron);
    assert.equal(rule(NOW), MAX_TIME_MS - 500);
    assert.equal(rule(MAX_TIME_MS - 500), null);
    // 8.64e15 is no multiple of 7 s: the next occurrence after it is past it.
    assert.throws(() => validateRecurring('s', { topic: 't', everyMs: 7_000 }, compileCron, MAX_TIME_MS), refused('late', 'no occurrence from now on'));
  });
});

describe('validateRecurring: an occurrence from now on', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['endAt already past', { topic: 't', everyMs: 60_000, endAt: NOW - 1 }, 'endAt: is already past'],
    ['endAt now', { topic: 't', everyMs: 60_000, endAt: NOW }, 'endAt: is already past'],
    ['endAt past, startAt before it', { topic: 't', cron: '* * * * *', startAt: NOW - 86_400_000, endAt: NOW - 3_600_000 }, 'endAt: is already past'],
    ['cron next occurrence after endAt', { topic: 't', cron: '0 9 * * *', endAt: NOW + 3_600_000 }, 'endAt: the schedule has no occurrence from now on'],
    ['cron next occurrence after max(now, startAt) at endAt', { topic: 't', cron: '0 0 1 * *', startAt: NOW + 86_400_000, endAt: Date.UTC(2030, 1, 1) }, 'no occurrence from now on'],
    ['interval next occurrence after endAt', { topic: 't', everyMs: 86_400_000, endAt: NOW + 3_600_000 }, 'no occurrence from now on'],
    ['interval from an old startAt, next at endAt', { topic: 't', everyMs: 7_200_000, startAt: NOW - 3_600_000, endAt: NOW + 3_600_000 }, 'no occurrence from now on'],
    ['cron that never fires', { topic: 't', cron: '0 0 31 4 *' }, 'cron: the schedule has no occurrence from now on'],
  ];
  for (const [name, input, says] of cases) {
    it(`refuses: ${name}`, () => assert.throws(() => validateRecurring('s', input, compileCron, NOW), refused(input, says)));
  }

  it('takes a schedule whose only occurrence left is now, or whose startAt is past', () => {
    assert.equal(validateRecurring('s', { topic: 't', everyMs: 3_600_000, endAt: NOW + 1 }, compileCron, NOW).endAt, NOW + 1);
    assert.equal(validateRecurring('s', { topic: 't', cron: '0 9 * * *', startAt: NOW - 86_400_000 * 30 }, compileCron, NOW).startAt, NOW - 86_400_000 * 30);
  });

  it('property: an interval schedule is taken exactly when its first occurrence at or after max(now, startAt) is before endAt', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 86_400_000 }),
        fc.option(fc.integer({ min: 0, max: 2 * 86_400_000 }), { nil: null }),
        fc.integer({ min: 1, max: 4 * 86_400_000 }),
        (everyMs, startOffset, endOffset) => {
          const startAt = startOffset === null ? null : NOW - 86_400_000 + startOffset;
          const endAt = NOW - 86_400_000 + endOffset;
          if (startAt !== null && endAt <= startAt) return;
          const anchor = startAt ?? 0;
          const from = Math.max(NOW, anchor);
          const first = anchor + Math.ceil((from - anchor) / everyMs) * everyMs;
          const input = { topic: 't', everyMs, ...(startAt !== null ? { startAt } : {}), endAt };
          if (first < endAt) assert.equal(validateRecurring('s', input, compileCron, NOW).endAt, endAt);
          else assert.throws(() => validateRecurring('s', input, compileCron, NOW), refused(input, /no occurrence from now on|already past/));
        },
      ),
      { numRuns: 500 },
    );
  });
});
