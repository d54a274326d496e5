import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { numberArray, textArray, uniform } from '../../../src/stores/postgres/array-literal.js';
import { PG_URL } from '../../helpers/postgres.js';

// The literals are parsed by the real server: whatever it reads back must be what was sent.
describe('postgres array literals', () => {
  const client = new pg.Client({ connectionString: PG_URL });
  before(() => client.connect());
  after(() => client.end());

  it('text arrays: quotes, backslashes, braces, commas, the word NULL, empty and non-ASCII strings, and SQL NULL survive', async () => {
    const values = ['a', '"', '\\', '\\"', '{x,y}', 'a,b', 'NULL', '', ' padded ', 'é€😀', '{"runAt":1}', null];
    const { rows } = await client.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [textArray(values)]);
    assert.deepEqual(rows[0]!.v, values);
  });

  it('text arrays: any strings PostgreSQL can hold come back equal (property)', async () => {
    const text = fc.oneof(fc.string(), fc.string({ unit: 'grapheme' }), fc.constantFrom('"', '\\', '{', '}', ',', 'NULL', ' ')).filter((s) => !s.includes('\u0000'));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.option(text, { nil: null }), { maxLength: 20 }), async (values) => {
        const { rows } = await client.query<{ v: (string | null)[] }>('SELECT $1::text[] AS v', [textArray(values)]);
        assert.deepEqual(rows[0]!.v, values);
      }),
      { numRuns: 200 },
    );
  });

  it('number arrays: bigints up to 2^53 and doubles read back to the same values', async () => {
    const ints = [0, 1, -1, Number.MAX_SAFE_INTEGER, 1_795_000_000_000];
    const floats = [0.1, 2, 1e-7, 123456.789, 5e-324, 1.7976931348623157e308];
    const { rows } = await client.query<{ i: string[]; f: number[] }>('SELECT $1::bigint[] AS i, $2::float8[] AS f', [numberArray(ints), numberArray(floats)]);
    assert.deepEqual(rows[0]!.i.map(Number), ints);
    assert.deepEqual(rows[0]!.f, floats);
    assert.throws(() => numberArray([1, Number.NaN]), RangeError);
  });

  it('number arrays: null is SQL NULL, first, last or alone', async () => {
    const values = [null, 5, null, 0.2, null];
    const { rows } = await client.query<{ v: (number | null)[]; one: (number | null)[] }>('SELECT $1::float8[] AS v, $2::int[] AS one', [numberArray(values), numberArray([null])]);
    assert.deepEqual(rows[0]!.v, values);
    assert.deepEqual(rows[0]!.one, [null]);
  });

  it('uniform: one element when all agree, else the values whole', () => {
    assert.deepEqual(uniform([3, 3, 3]), [3]);
    assert.deepEqual(uniform([3, 4, 3]), [3, 4, 3]);
    assert.deepEqual(uniform([]), []);
  });
});
