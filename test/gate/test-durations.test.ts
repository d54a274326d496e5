import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import durationsReporter, { type TestEvent } from '../../scripts/durations-reporter.js';
import { longestFirst, readDurations, saveDurations } from '../../scripts/test-durations.js';

const dir = mkdtempSync(join(tmpdir(), 'delayq-durations-test-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const files = (...names: string[]): { file: string }[] => names.map((file) => ({ file }));

describe('the order test files start in', () => {
  it('longest first by the recorded seconds; files never recorded before them, in their given order', () => {
    const durations = new Map([
      ['test/a.test.ts', 2],
      ['test/b.test.ts', 90],
      ['test/c.test.ts', 30],
    ]);
    const order = longestFirst(files('test/a.test.ts', 'test/b.test.ts', 'test/new2.test.ts', 'test/c.test.ts', 'test/new1.test.ts'), durations);
    assert.deepEqual(
      order.map(({ file }) => file),
      ['test/new2.test.ts', 'test/new1.test.ts', 'test/b.test.ts', 'test/c.test.ts', 'test/a.test.ts'],
    );
  });

  it('no record (a missing, broken or odd file) leaves the given order', () => {
    const given = files('test/x.test.ts', 'test/y.test.ts');
    for (const text of [null, '{ not json', '[1, 2]', '{"test/y.test.ts": "9"}']) {
      const path = join(dir, `record-${Math.random()}.json`);
      if (text !== null) writeFileSync(path, text);
      assert.deepEqual(longestFirst(given, readDurations(path)), given, String(text));
    }
  });

  it('a recording keeps the files not run this time and replaces the others, sorted by path, to 0.1 s', () => {
    const path = join(dir, 'durations.json');
    writeFileSync(path, JSON.stringify({ 'test/kept.test.ts': 5, 'test/run.test.ts': 50 }));
    saveDurations(new Map([['test/run.test.ts', 12.345], ['test/added.test.ts', 1.06]]), path);
    assert.equal(readFileSync(path, 'utf8'), `${JSON.stringify({ 'test/added.test.ts': 1.1, 'test/kept.test.ts': 5, 'test/run.test.ts': 12.3 }, null, 2)}\n`);
  });
});

describe('the durations reporter', () => {
  it("takes each file's own end (test:complete of the test named by its path), in seconds, from the repository's root", async () => {
    const a = resolve(process.cwd(), 'test/a.test.ts');
    const b = resolve(process.cwd(), 'test/b.test.ts');
    const helper = resolve(process.cwd(), 'src/testing/suite.ts');
    async function* events(): AsyncGenerator<TestEvent> {
      yield { type: 'test:dequeue', data: { nesting: 0, name: a, file: a } };
      yield { type: 'test:complete', data: { nesting: 0, name: 'a describe of a', file: a, details: { duration_ms: 700 } } };
      yield { type: 'test:complete', data: { nesting: 0, name: 'a suite a helper defines', file: helper, details: { duration_ms: 900 } } };
      yield { type: 'test:pass', data: { nesting: 0, name: 'a describe of a', file: a, details: { duration_ms: 700 } } };
      yield { type: 'test:complete', data: { nesting: 1, name: b, file: b, details: { duration_ms: 5 } } };
      yield { type: 'test:complete', data: { nesting: 0, name: b, file: b, details: { duration_ms: 250 } } };
      yield { type: 'test:complete', data: { nesting: 0, name: a, file: a, details: { duration_ms: 2_000 } } };
      yield { type: 'test:diagnostic', data: { nesting: 0 } };
    }
    let out = '';
    for await (const chunk of durationsReporter(events())) out += chunk;
    assert.deepEqual(JSON.parse(out), { 'test/b.test.ts': 0.25, 'test/a.test.ts': 2 });
  });
});
