/**
 * Maps a JSON-schema failure (from Ajv, via fastify) to the code the core validators use
 * for the same field, so a wrong type of `topic` is INVALID_TOPIC whether the schema or
 * the core caught it.
 */
import { own } from '../core/dict.js';
import { DelayQError, type ErrorCode } from '../core/errors.js';
import { shown } from '../core/shown.js';

interface SchemaIssue {
  readonly keyword: string;
  readonly instancePath: string;
  readonly params: Record<string, unknown>;
  readonly message?: string | undefined;
  /** The schema of the value that failed, and the value (Ajv's `verbose`, set in app.ts). */
  readonly parentSchema?: unknown;
  readonly data?: unknown;
}

/** The keywords an integer field with bounds fails on: its type, or a bound. */
const INTEGER_KEYWORDS = new Set(['type', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf']);

/**
 * What an integer field needs, in the words the core validators use for the same field
 * ("must be a whole number from 1 to 1000000 (got -3)", core/flow/limits.ts), whichever
 * rule it broke: a -3, a 2.5 and a "3" all hear the whole rule rather than Ajv's "must be
 * integer" or "must be >= 1". Null for any other failure.
 */
function integerProblem(issue: SchemaIssue): string | null {
  const schema = issue.parentSchema as { type?: unknown; minimum?: unknown; maximum?: unknown } | undefined;
  if (schema?.type !== 'integer' || !INTEGER_KEYWORDS.has(issue.keyword)) return null;
  const min = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const max = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  const rule =
    min !== undefined && max !== undefined ? `from ${min} to ${max}` : min !== undefined ? `of at least ${min}` : max !== undefined ? `of at most ${max}` : '';
  return `must be a whole number${rule === '' ? '' : ` ${rule}`} (got ${shown(issue.data)})`;
}

const FIELD_CODES: Readonly<Record<string, ErrorCode>> = {
  topic: 'INVALID_TOPIC',
  id: 'INVALID_ID',
  after: 'INVALID_ID',
  delayMs: 'INVALID_DELAY',
  runAt: 'INVALID_DELAY',
  ttrMs: 'INVALID_OPTION',
  maxAttempts: 'INVALID_OPTION',
  backoff: 'INVALID_OPTION',
  max: 'INVALID_OPTION',
  waitMs: 'INVALID_OPTION',
  limit: 'INVALID_OPTION',
  topicLimit: 'INVALID_OPTION',
  url: 'INVALID_URL',
  secret: 'INVALID_SECRET',
  timeoutMs: 'INVALID_OPTION',
  concurrency: 'INVALID_OPTION',
  headers: 'INVALID_OPTION',
  // Topic flow limits (core/flow/limits.ts).
  rate: 'INVALID_OPTION',
  periodMs: 'INVALID_OPTION',
  burst: 'INVALID_OPTION',
};

export function schemaErrorToDelayQError(issues: readonly SchemaIssue[], context: string): DelayQError {
  const issue = issues[0];
  if (issue === undefined) return new DelayQError('INVALID_ARGUMENT', `${context}: invalid`);
  const path = issue.instancePath.split('/').filter((part) => part.length > 0);
  const where = path.length > 0 ? path.join('.') : context;
  if (issue.keyword === 'additionalProperties') {
    const field = String(issue.params['additionalProperty']);
    return new DelayQError('INVALID_ARGUMENT', `${where === context ? context : `${context}.${where}`}.${field}: unknown field`, { field });
  }
  const field = issue.keyword === 'required' ? String(issue.params['missingProperty']) : (path.at(-1) ?? context);
  const code = path[0] === 'backoff' || path[0] === 'headers' ? 'INVALID_OPTION' : (own(FIELD_CODES, field) ?? 'INVALID_ARGUMENT');
  const problem =
    issue.keyword === 'required' ? 'is required' : issue.keyword === 'anyOf' ? 'must be epoch ms or an ISO 8601 string' : (integerProblem(issue) ?? issue.message ?? 'is invalid');
  const name = issue.keyword === 'required' ? field : where;
  return new DelayQError(code, `${name}: ${problem}`, { field });
}
