/**
 * The JSON body parser, in place of fastify's (secure-json-parse), for clear answers to
 * hostile bodies:
 * - not JSON, or empty: INVALID_JSON, saying why;
 * - a `__proto__` key, or a `constructor` key holding a `prototype` (prototype pollution
 *   where the body is merged into an object): INVALID_ARGUMENT naming the key and where it
 *   is (fastify answered "Body is not valid JSON" to a valid body);
 * - nesting: JSON.parse does not recurse (V8 parses a body nested 100,000 deep), and the
 *   walk here does not either; a payload too deep is PAYLOAD_TOO_DEEP from the library's
 *   own check (core/task/validate.ts), before anything serialises it.
 * Like secure-json-parse, the key walk runs only when the text holds such a key (escapes
 * included), so an ordinary body costs a JSON.parse and two regular-expression scans.
 */
import { own } from '../core/dict.js';
import { DelayQError } from '../core/errors.js';
import { HttpError } from './errors.js';

// secure-json-parse's own patterns: the key, spelled with or without \u escapes, before a colon.
const SUSPECT_PROTO = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
const SUSPECT_CONSTRUCTOR = /"(?:c|\\u0063)(?:o|\\u006[Ff])(?:n|\\u006[Ee])(?:s|\\u0073)(?:t|\\u0074)(?:r|\\u0072)(?:u|\\u0075)(?:c|\\u0063)(?:t|\\u0074)(?:o|\\u006[Ff])(?:r|\\u0072)"\s*:/;

/** Longest part of JSON.parse's message kept (it may quote the body). */
const MAX_REASON = 160;

export function parseJsonBody(text: string): unknown {
  if (text.length === 0) throw new HttpError('INVALID_JSON', 'body: empty; send a JSON object with Content-Type: application/json');
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = (error as Error).message;
    throw new HttpError('INVALID_JSON', `body: not valid JSON (${reason.length > MAX_REASON ? `${reason.slice(0, MAX_REASON)}...` : reason})`);
  }
  if (SUSPECT_PROTO.test(text) || SUSPECT_CONSTRUCTOR.test(text)) {
    const found = forbiddenKeyIn(value);
    if (found !== null)
      throw new DelayQError('INVALID_ARGUMENT', `${found.path}: the key "${found.key}" is not allowed (it can pollute prototypes where the body is parsed)`, {
        field: found.path,
        key: found.key,
      });
  }
  return value;
}

/** The first `__proto__` or `constructor.prototype` key in a parsed value, without recursion. */
export function forbiddenKeyIn(root: unknown): { key: string; path: string } | null {
  const stack: { value: unknown; path: string }[] = [{ value: root, path: 'body' }];
  while (stack.length > 0) {
    const { value, path } = stack.pop()!;
    if (typeof value !== 'object' || value === null) continue;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], path: `${path}[${i}]` });
      continue;
    }
    const record = value as Record<string, unknown>;
    for (const key of Object.keys(record)) {
      const child = own(record, key);
      if (key === '__proto__') return { key, path: `${path}.__proto__` };
      if (key === 'constructor' && typeof child === 'object' && child !== null && Object.hasOwn(child, 'prototype'))
        return { key: 'constructor.prototype', path: `${path}.constructor.prototype` };
      stack.push({ value: child, path: `${path}.${key}` });
    }
  }
  return null;
}
