// The chaos suite's checker (chaos/checker.ts) on made-up histories: it must see each kind
// of broken promise, and must not call a legitimate redelivery one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { addLine, check, newFacts, undelivered } from '../../chaos/checker.js';

function verdict(lines: string[]): ReturnType<typeof check> {
  const facts = newFacts();
  for (const line of lines) addLine(facts, line);
  return check(facts);
}

describe('chaos checker', () => {
  it('passes a clean history, and a redelivery after a reservation ran out unacked as an explained duplicate', () => {
    const v = verdict(['S a 100', 'S b 200', 'D a 1 100', 'A a 1 110', 'D b 1 205', 'D b 2 1800', 'A b 2 1810']);
    assert.deepEqual([v.scheduled, v.delivered, v.lost, v.early, v.ackedAgain, v.duplicates, v.unexplainedDuplicates], [2, 2, 0, 0, 0, 1, 0]);
    assert.equal(v.maxLatenessMs, 5);
  });

  it('counts a lost task, an early delivery and a delivery after an acknowledged ack', () => {
    const v = verdict(['S lost 100', 'S early 500', 'D early 1 499', 'A early 1 510', 'S again 100', 'D again 1 100', 'A again 1 120', 'D again 2 2000']);
    assert.equal(v.lost, 1);
    assert.deepEqual(v.examples.lost, ['lost']);
    assert.equal(v.early, 1);
    assert.equal(v.ackedAgain, 1);
    assert.equal(v.unexplainedDuplicates, 1, 'the earlier delivery had been acked');
  });

  it('counts an ack acknowledged for an attempt older than one delivered before it (a stale receipt that acked)', () => {
    const v = verdict(['S x 0', 'D x 1 10', 'D x 2 2000', 'A x 1 2100']);
    assert.equal(v.ackedAgain, 1);
  });

  it('lists every acknowledged schedule not delivered yet, in the order acknowledged (what a drain waits for)', () => {
    const facts = newFacts();
    for (const line of ['S c 100', 'S a 100', 'S b 100', 'D a 1 100', 'D orphan 1 10']) addLine(facts, line);
    assert.deepEqual(undelivered(facts), ['c', 'b']);
  });

  it('ignores deliveries of tasks whose schedule was never acknowledged, except as deliveries', () => {
    const v = verdict(['D orphan 1 10', 'A orphan 1 20']);
    assert.deepEqual([v.scheduled, v.lost, v.ackedAgain], [0, 0, 0]);
  });

  it('reads rejected calls (E lines) into the facts, and judges nothing by them', () => {
    const facts = newFacts();
    for (const line of ['S a 100', 'E schedule STORE_UNAVAILABLE 150 3', 'E ack !TypeError 160 12', 'D a 1 100']) addLine(facts, line);
    assert.deepEqual(facts.errors, [
      { op: 'schedule', code: 'STORE_UNAVAILABLE', at: 150, ms: 3 },
      { op: 'ack', code: '!TypeError', at: 160, ms: 12 },
    ]);
    assert.equal(check(facts).lost, 0);
  });

  it('reads slow successful calls (C lines) into the facts', () => {
    const facts = newFacts();
    for (const line of ['C reserve 150 2100', 'C ack 160 600']) addLine(facts, line);
    assert.deepEqual(facts.slow, [
      { op: 'reserve', at: 150, ms: 2100 },
      { op: 'ack', at: 160, ms: 600 },
    ]);
  });
});
