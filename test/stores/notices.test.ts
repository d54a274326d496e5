/**
 * Messages from other processes read as untrusted input (src/coordination/notices.ts): the
 * timers and ready messages of PostgreSQL NOTIFY and Redis PUBLISH, parsed and checked, a bad
 * one dropped whole, counted per channel and logged at most once a minute per channel.
 * The reproductions of issue 45: `pg_notify('delayq:<schema>:timers', 'a1 x -Infinity 1')`
 * killed every process of the schema (RangeError from TimingWheel.add), `PUBLISH
 * <prefix>:timers "a1 x abc 1"` did the same on Redis, and a ready notice with a seq that is
 * not a number drove a lane cursor to NaN.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ManualClock } from '../../src/core/manual-clock.js';
import type { Logger } from '../../src/core/ports/index.js';
import { BadNotice, MAX_NOTICE_LINES, NoticeGuard, parsePgReadyNotice, parseRedisReadyNotice, parseTimerNotice } from '../../src/coordination/notices.js';
import { timerLine } from '../../src/coordination/timer-lines.js';

function recordingLogger(): Logger & { warnings: { fields: Record<string, unknown>; message: string }[] } {
  const warnings: { fields: Record<string, unknown>; message: string }[] = [];
  const none = (): void => undefined;
  return { warnings, debug: none, info: none, error: none, warn: (fields: object, message?: string) => void warnings.push({ fields: fields as Record<string, unknown>, message: message ?? '' }) };
}

describe('timers messages', () => {
  it('reads back every line a process writes', () => {
    const refs = [
      { id: 'a1', topic: 'mail', kind: 'run' as const, dueAt: 1_795_000_000_000, seq: 7, receipt: null },
      { id: 'order-42:close', topic: '~push:orders.close', kind: 'run' as const, dueAt: 0, seq: 0, receipt: null },
    ];
    assert.deepEqual(parseTimerNotice(refs.map(timerLine).join('\n')), refs);
  });

  it('drops a whole message with any line no process writes', () => {
    for (const message of [
      'a1 x -Infinity 1',
      'a1 x abc 1',
      'a1 x 1 abc',
      'a1 x NaN 1',
      'a1 x 1e400 1',
      'a1 x -1 1',
      'a1 x 1.5 1',
      'a1 x 9007199254740993 1',
      'a1 x 0x10 1',
      'a1 x',
      'a1 x 1 2 3',
      '',
      ' ',
      'a1 x 1 1\n',
      'a b x 1 1',
      'a1 ~push: 1 1',
      'a1 ~x 1 1',
      'a\u00e91 x 1 1',
      `ok x 1 1\na1 x -Infinity 1`,
    ])
      assert.ok(parseTimerNotice(message) instanceof BadNotice, JSON.stringify(message));
  });

  it('bounds a message: lines and length', () => {
    const line = 'a x 1 1';
    assert.equal((parseTimerNotice(Array(MAX_NOTICE_LINES).fill(line).join('\n')) as unknown[]).length, MAX_NOTICE_LINES);
    assert.ok(parseTimerNotice(Array(MAX_NOTICE_LINES + 1).fill(line).join('\n')) instanceof BadNotice);
    assert.ok(parseTimerNotice(`${'a'.repeat(6_000_000)} x 1 1`) instanceof BadNotice);
  });
});

describe('ready messages', () => {
  it('PostgreSQL: "lane" or "lane dueAt seq", whole numbers only', () => {
    assert.deepEqual(parsePgReadyNotice('~push:b 1200 42'), { lane: '~push:b', from: { dueAt: 1_200, seq: 42 } });
    assert.deepEqual(parsePgReadyNotice('b'), { lane: 'b' });
    for (const message of ['b abc', 'b 1 NaN', 'b 1 -Infinity', 'b NaN NaN', 'b 1', 'b 1 2 3', '', ' ', '~push:', 'a b', 'b\n1 2', `${'x'.repeat(1_001)}`])
      assert.ok(parsePgReadyNotice(message) instanceof BadNotice, JSON.stringify(message));
  });

  it('Redis: "shard owner" or "shard owner r", a shard of the store and an owner token', () => {
    assert.deepEqual(parseRedisReadyNotice('3 Zq3v_-ab', 16), { shard: 3, owner: 'Zq3v_-ab', ranked: false });
    assert.deepEqual(parseRedisReadyNotice('3 Zq3v_-ab r', 16), { shard: 3, owner: 'Zq3v_-ab', ranked: true });
    for (const message of ['16 x', '-1 x', 'NaN x', 'abc x', '1', '1 ', '1 a b', '1 a r r', '1 a R', '1 a ', ' 1 x', '1.5 x', '1 \u00e9', `1 ${'x'.repeat(65)}`])
      assert.ok(parseRedisReadyNotice(message, 16) instanceof BadNotice, JSON.stringify(message));
  });
});

describe('NoticeGuard', () => {
  it('counts every dropped message per channel, and warns once a minute per channel with the count since', () => {
    const clock = new ManualClock(1_000_000);
    const logger = recordingLogger();
    const guard = new NoticeGuard('postgres', ['timers', 'ready'], logger, clock);
    assert.deepEqual([...guard.counts()], [['timers', 0], ['ready', 0]]);
    for (let i = 0; i < 100; i++) guard.drop('timers', new BadNotice('a dueAt that is not a whole number of ms'), `a${i} x -Infinity 1`);
    guard.drop('ready', new BadNotice('x'), 'b NaN NaN');
    assert.deepEqual([...guard.counts()], [['timers', 100], ['ready', 1]]);
    assert.equal(logger.warnings.length, 2, 'one line per channel');
    assert.deepEqual(logger.warnings[0]!.fields, { channel: 'timers', reason: 'a dueAt that is not a whole number of ms', message: '"a0 x -Infinity 1"', dropped: 1 });
    clock.advance(59_999);
    guard.drop('timers', new BadNotice('y'), 'z');
    assert.equal(logger.warnings.length, 2);
    clock.advance(1);
    guard.drop('timers', new BadNotice('y'), 'z'.repeat(10_000));
    assert.equal(logger.warnings.length, 3);
    assert.equal(logger.warnings[2]!.fields['dropped'], 101, 'dropped since the last line');
    assert.ok(String(logger.warnings[2]!.fields['message']).length < 100, 'the message is cut');
  });
});
