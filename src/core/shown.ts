/**
 * Values and field names as error messages show them: short whatever the caller sent, so
 * an answer to a 28 MB string or key is not itself 28 MB. One format for every validator.
 */
const MAX_SHOWN = 40;

/** A value in a message's "(got ...)": strings quoted and cut, objects by their type. */
export function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value.length > MAX_SHOWN ? `${value.slice(0, MAX_SHOWN)}...` : value);
  if (typeof value === 'number' || typeof value === 'boolean' || value === null) return String(value);
  return typeof value;
}

/** A caller's field name (an unknown key), cut like a value. */
export function shownKey(key: string): string {
  return key.length > MAX_SHOWN ? `${key.slice(0, MAX_SHOWN)}...` : key;
}
