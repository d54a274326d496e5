// docs/adr/README.md indexes every ADR by area, with the eight a newcomer reads first.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const DIR = 'docs/adr';
const index = readFileSync(join(DIR, 'README.md'), 'utf8');
const records = readdirSync(DIR).filter((name) => /^\d{4}-.+\.md$/.test(name)).sort();

/** The text of a `## heading` section, up to the next one. */
function section(heading: string): string {
  const start = index.indexOf(`\n## ${heading}\n`);
  assert.notEqual(start, -1, `docs/adr/README.md has no "## ${heading}"`);
  const end = index.indexOf('\n## ', start + 1);
  return index.slice(start, end === -1 ? undefined : end);
}

describe('the ADR index (docs/adr/README.md)', () => {
  it('each ADR has a number of its own', () => {
    const numbers = records.map((name) => name.slice(0, 4));
    assert.deepEqual(
      numbers.filter((n, i) => numbers.indexOf(n) !== i),
      [],
      'two records share a number: renumber the later one',
    );
  });

  it('lists every ADR file in the table of exactly one area, under its own number', () => {
    const rows = [...section('By area').matchAll(/^\| \[(\d{4})\]\(([^)]+)\) \|/gm)].map(([, number, file]) => ({ number: number ?? '', file: file ?? '' }));
    for (const name of records)
      assert.equal(rows.filter((row) => row.file === name).length, 1, `${name}: add a row for it to one area's table in docs/adr/README.md`);
    for (const row of rows) {
      assert.ok(records.includes(row.file), `the index lists ${row.file}, which is not in docs/adr/`);
      assert.equal(row.file.slice(0, 4), row.number, `${row.file} is listed as ${row.number}`);
    }
  });

  it('names the eight to read first, each an ADR that exists', () => {
    const first = [...section('Read these first').matchAll(/^\d+\. \[ADR (\d{4})\]\(([^)]+)\)/gm)];
    assert.equal(first.length, 8);
    for (const [, number, file] of first) {
      assert.ok(file !== undefined && existsSync(join(DIR, file)), `${file} does not exist`);
      assert.equal(file.slice(0, 4), number);
    }
  });
});
