/**
 * A payload as the stores keep it: its JSON text, checked before and after serialising
 * (depth, cycles, prototype-polluting keys, size in UTF-8 bytes), so that a payload a store
 * holds can always be parsed again and sent over HTTP.
 */
import { DelayQError } from '../errors.js';
import { fail } from './invalid.js';
import type { Limits } from './validate.js';

export function serializePayload(payload: unknown, limits: Limits): string {
  if (typeof payload === 'object' && payload !== null) checkPayloadShape(payload, limits);
  let text: string | undefined;
  try {
    text = JSON.stringify(payload === undefined ? null : payload);
  } catch (error) {
    // A toJSON that returns something deeper than the walk saw overflows here instead.
    if (error instanceof RangeError) throw payloadTooDeep(limits);
    fail('INVALID_PAYLOAD', 'payload', `is not JSON-serialisable: ${(error as Error).message}`);
  }
  if (text === undefined) fail('INVALID_PAYLOAD', 'payload', 'is not JSON-serialisable', payload);
  // A UTF-8 character takes at most 3 bytes per UTF-16 unit, so short strings skip the count.
  if (text.length * 3 > limits.maxPayloadBytes && utf8Length(text) > limits.maxPayloadBytes)
    throw new DelayQError('PAYLOAD_TOO_LARGE', `payload: serialised size exceeds ${limits.maxPayloadBytes} bytes`, {
      field: 'payload',
      limit: limits.maxPayloadBytes,
    });
  return text;
}

/**
 * Checks a payload's shape before JSON.stringify (which recurses once per level, so a
 * payload nested 100,000 deep overflowed the stack): PAYLOAD_TOO_DEEP past
 * `limits.maxPayloadDepth`, INVALID_PAYLOAD for a cycle, INVALID_ARGUMENT for a key that
 * pollutes prototypes where the payload is parsed and merged (`__proto__`, or `constructor`
 * holding a `prototype`), which an HTTP body is refused for too. The walk recurses, but
 * never deeper than the limit (at most MAX_PAYLOAD_DEPTH = 1,000 small frames), so it
 * cannot overflow either; `ancestors` holds the objects above the current one, which is
 * how a cycle is told from a value shared by two branches. Every node costs at least one
 * byte of JSON, so a walk of more nodes than maxPayloadBytes is PAYLOAD_TOO_LARGE early
 * (a small cyclic-looking DAG would otherwise take exponential time).
 */
function checkPayloadShape(root: object, limits: Limits): void {
  const walk: PayloadWalk = { maxDepth: limits.maxPayloadDepth, budget: limits.maxPayloadBytes, ancestors: [], limits };
  try {
    walkNode(root, 1, walk);
  } catch (error) {
    if (error instanceof DelayQError) throw error;
    // A getter that throws, a revoked proxy...: JSON.stringify would fail on it as well.
    fail('INVALID_PAYLOAD', 'payload', `is not JSON-serialisable: ${(error as Error).message}`);
  }
}

interface PayloadWalk {
  readonly maxDepth: number;
  budget: number;
  readonly ancestors: object[];
  readonly limits: Limits;
}

function walkNode(node: object, depth: number, walk: PayloadWalk): void {
  if (depth > walk.maxDepth) throw payloadTooDeep(walk.limits);
  const ancestors = walk.ancestors;
  for (let i = 0; i < ancestors.length; i++) if (ancestors[i] === node) fail('INVALID_PAYLOAD', 'payload', 'is circular (an object contains itself)');
  ancestors.push(node);
  if (Array.isArray(node)) {
    const items = node as unknown[];
    walk.budget -= items.length + 1;
    if (walk.budget < 0) throw payloadTooLarge(walk.limits);
    for (let i = 0; i < items.length; i++) {
      const item = items[i];
      if (typeof item === 'object' && item !== null) walkNode(item, depth + 1, walk);
    }
  } else {
    const record = node as Record<string, unknown>;
    for (const key in record) {
      if (!Object.hasOwn(record, key)) continue;
      if (key === '__proto__') forbiddenKey('__proto__');
      walk.budget--;
      // eslint-disable-next-line delayq/no-prototype-keys -- an own key (Object.hasOwn above)
      const value = record[key];
      if (typeof value === 'object' && value !== null) {
        if (key === 'constructor' && Object.hasOwn(value, 'prototype')) forbiddenKey('constructor.prototype');
        walkNode(value, depth + 1, walk);
      }
    }
    if (--walk.budget < 0) throw payloadTooLarge(walk.limits);
  }
  ancestors.pop();
}

function payloadTooLarge(limits: Limits): DelayQError {
  return new DelayQError('PAYLOAD_TOO_LARGE', `payload: serialised size exceeds ${limits.maxPayloadBytes} bytes`, { field: 'payload', limit: limits.maxPayloadBytes });
}

function payloadTooDeep(limits: Limits): DelayQError {
  return new DelayQError('PAYLOAD_TOO_DEEP', `payload: nested deeper than ${limits.maxPayloadDepth} levels of objects and arrays`, {
    field: 'payload',
    limit: limits.maxPayloadDepth,
  });
}

function forbiddenKey(key: string): never {
  throw new DelayQError('INVALID_ARGUMENT', `payload: the key "${key}" is not allowed (it can pollute prototypes where the payload is parsed)`, {
    field: 'payload',
    key,
  });
}

export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      bytes += 4;
      i++;
    } else bytes += 3;
  }
  return bytes;
}
