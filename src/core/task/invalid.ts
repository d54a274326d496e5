/**
 * The one message format of a refused input: "<field>: <what is wrong> (got <value>)", as a
 * DelayQError with a stable code and the field. Every validator throws through it.
 */
import { DelayQError, type ErrorCode } from '../errors.js';
import { shown } from '../shown.js';

export function fail(code: ErrorCode, field: string, problem: string, value?: unknown): never {
  const got = value === undefined ? '' : ` (got ${shown(value)})`;
  throw new DelayQError(code, `${field}: ${problem}${got}`, { field });
}
