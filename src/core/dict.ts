/**
 * Objects keyed by strings from outside (topics, ids, schedule ids, origins, header names):
 * with no prototype, so no name reaches `Object.prototype`. On a plain `{}`, a topic named
 * `__proto__` is a setter (writing it replaces the prototype; `(o[topic] ??= {})[state] = n`
 * then writes `Object.prototype.pending`), and `constructor`, `toString`, `hasOwnProperty`...
 * read as functions before anything was stored. A `Dict` has only what was put in it.
 *
 * Prefer a `Map` inside a module; a `Dict` is for what leaves as JSON-shaped data (stats,
 * limits, headers), where a `Map` would not serialise. The lint rule
 * `delayq/no-prototype-keys` (scripts/lint/no-prototype-keys.js) refuses a string-keyed
 * read or write of any object not typed `Dict`, so new `{}`-keyed-by-name code fails lint.
 */
declare const NULL_PROTOTYPE: unique symbol;

/** A null-prototype object keyed by strings: made only by `dict` / `dictOf` / `asDict`. */
export type Dict<V> = { [key: string]: V } & { readonly [NULL_PROTOTYPE]: true };

/** An empty `Dict`. */
export function dict<V>(): Dict<V> {
  return Object.create(null) as Dict<V>;
}

/** A `Dict` of these entries (a later entry of the same key wins). */
export function dictOf<V>(entries: Iterable<readonly [string, V]>): Dict<V> {
  const out = dict<V>();
  for (const [key, value] of entries) out[key] = value;
  return out;
}

/** A `Dict` with the own enumerable properties of `record` (a copy: the record is left alone). */
export function asDict<V>(record: Readonly<Record<string, V>>): Dict<V> {
  return dictOf(Object.entries(record));
}

/**
 * `record[key]` if `record` has that key of its own, else undefined: a lookup in a plain
 * object (a constant table, JSON from outside) that a name like `constructor` cannot reach
 * through the prototype.
 */
export function own<V>(record: Readonly<Record<string, V>>, key: string): V | undefined {
  // eslint-disable-next-line delayq/no-prototype-keys -- guarded by Object.hasOwn
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
