/**
 * `inlined` (context.ts): the parameters of a statement the store sends by the simple
 * protocol (a batch's `SET LOCAL` and its statement in one message, ADR 0053) as quoted
 * literals. The real server reads back exactly what was sent, under either setting of
 * standard_conforming_strings: a value can never end its literal, and one that looks like a
 * parameter is never replaced.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import pg from 'pg';
import { inlined } from '../../../src/stores/postgres/context.js';
import { textArray } from '../../../src/stores/postgres/array-literal.js';
import { PG_URL } from '../../helpers/postgres.js';

describe('postgres inlined parameters', () => {
  const client = new pg.Client({ connectionString: PG_URL });
  before(() => client.connect());
  after(() => client.end());

  it('the server reads back every string, number, array literal and null as it was sent', async () => {
    // No NUL: PostgreSQL text cannot hold it.
    const text = fc.string({ unit: 'binary' }).filter((s) => !s.includes('\u0000'));
    for (const conforming of ['on', 'off']) {
      await client.query(`SET standard_conforming_strings = ${conforming}`);
      await fc.assert(
        fc.asyncProperty(text, text, fc.integer(), fc.array(text, { maxLength: 5 }), async (a, b, n, list) => {
          const sql = inlined('SELECT $1::text AS a, $2::text AS b, $3::bigint AS n, $4::text[] AS list, $5::text AS none', [a, b, n, textArray(list), null]);
          const [row] = (await client.query<{ a: string; b: string; n: string; list: string[]; none: null }>(sql)).rows;
          assert.deepEqual(row, { a, b, n: String(n), list, none: null });
        }),
        { numRuns: 100 },
      );
    }
    await client.query('RESET standard_conforming_strings');
    assert.equal(inlined('SELECT $1, $2, $10', ['$2', 'two', 3, 4, 5, 6, 7, 8, 9, true]), `SELECT '$2', 'two', 'true'`);
  });

  it('refuses what cannot go inline', () => {
    assert.throws(() => inlined('SELECT $1', [{ a: 1 }]), TypeError);
    assert.throws(() => inlined('SELECT $1', [['a']]), TypeError);
    assert.throws(() => inlined('SELECT $1', [Number.NaN]), RangeError);
  });
});
