import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, parseDuration } from '../../src/cli/duration.js';
import { table } from '../../src/cli/output.js';

describe('cli durations and tables', () => {
  it('parses 500ms, 30s, 5m, 48h, 7d, 1.5s and bare ms', () => {
    const cases: [string, number][] = [['500ms', 500], ['30s', 30_000], ['5m', 300_000], ['48h', 172_800_000], ['7d', 604_800_000], ['1.5s', 1_500], ['250', 250]];
    for (const [text, ms] of cases) assert.equal(parseDuration(text), ms, text);
  });

  it('rejects what is not a duration', () => {
    for (const text of ['', 'soon', '5x', '-5s', '5 m s', '1e3s']) assert.throws(() => parseDuration(text), /not a duration/, text);
  });

  it('formats durations shortly', () => {
    assert.equal(formatDuration(950), '950ms');
    assert.equal(formatDuration(30_000), '30s');
    assert.equal(formatDuration(310_000), '5m 10s');
    assert.equal(formatDuration(172_800_000), '2d');
  });

  it('aligns table columns', () => {
    assert.equal(table(['ID', 'STATE'], [['a', 'pending'], ['long-id', 'dead']]), 'ID       STATE\na        pending\nlong-id  dead');
  });
});
