/**
 * Array parameters as PostgreSQL array literals (`{1,2,3}`, `{"a","b\"c",NULL}`), built here
 * instead of by node-postgres. Its encoder prepares and escapes each element through a
 * generic path (prepareValue, escapeElement, arrayString): a profile of scheduling batches
 * of 1,000 put it at about a quarter of the client's time. A string parameter goes to the
 * server as it is, and `$1::bigint[]` parses the literal there.
 *
 * `uniform` sends a column whose values are all the same as one element: the statement reads
 * it as `coalesce(col, ($n::type[])[1])` (unnest pads the shorter array with NULLs), so a
 * batch with one retry policy or one topic sends that value once instead of 1,000 times.
 * For a column whose NULL means something (a policy column, migration 0009) the statement
 * reads `CASE WHEN cardinality($n) = 1 ...` instead, since coalesce would fill a real NULL.
 */

/** Text elements, always quoted (a quoted NULL is the string "NULL"); `null` is SQL NULL. */
export function textArray(values: readonly (string | null)[]): string {
  let out = '{';
  for (let i = 0; i < values.length; i++) {
    if (i > 0) out += ',';
    const v = values[i]!;
    out += v === null ? 'NULL' : `"${NEEDS_ESCAPE.test(v) ? v.replace(ESCAPED, '\\$&') : v}"`;
  }
  return `${out}}`;
}

const NEEDS_ESCAPE = /["\\]/;
const ESCAPED = /["\\]/g;

/**
 * Finite numbers (integers for integer columns: the schedulers' validators see to that), in
 * JavaScript's shortest round-trip form, which float8 reads back to the same double; `null`
 * is SQL NULL.
 */
export function numberArray(values: readonly (number | null)[]): string {
  let nulls = false;
  for (const v of values)
    if (v === null) nulls = true;
    else if (!Number.isFinite(v)) throw new RangeError(`not a finite number: ${v}`);
  // join writes null as nothing, which an array literal does not read.
  return `{${(nulls ? values.map((v) => v ?? 'NULL') : values).join(',')}}`;
}

/** `values` as one element when every one is the same (see the module's note), else whole. */
export function uniform<T>(values: readonly T[]): readonly T[] {
  const first = values[0];
  for (let i = 1; i < values.length; i++) if (values[i] !== first) return values;
  return values.length === 0 ? values : [first as T];
}
