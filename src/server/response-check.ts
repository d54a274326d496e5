/**
 * A check for tests (AppOptions.checkResponses): every answer of a described route must
 * pass through its response schema unchanged, and every error it answers must be one its
 * schema lists. fastify's serializer drops fields a schema does not name and turns values
 * into the schema's types; with this check on, any such loss fails the request (500) and
 * prints what was lost, so the test suites that drive each route prove the contract.
 */
import { own } from '../core/dict.js';
import { isDeepStrictEqual } from 'node:util';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errorStatus, routeErrors } from './route-schema.js';
import { isWireErrorCode } from '../wire/error-codes.js';

/** What is wrong with this answer, or null. */
export function responseProblem(request: FastifyRequest, reply: FastifyReply, payload: unknown): string | null {
  const schema = request.routeOptions.schema;
  if (schema?.operationId === undefined || schema.hide === true) return null;
  const status = reply.statusCode;
  const route = `${request.method} ${request.routeOptions.url ?? ''}`;
  const response = (schema.response ?? {}) as Record<string, unknown>;
  if (!Object.hasOwn(response, String(status)) && !Object.hasOwn(response, `${String(status)[0]}xx`)) return `${route}: no response schema for status ${status}`;
  if (status >= 400 && !Object.hasOwn(response, String(status))) {
    const code = (payload as { error?: { code?: unknown } } | null)?.error?.code;
    if (!isWireErrorCode(code)) return `${route}: answered ${status} without an error code`;
    if (!routeErrors(request.method, schema, request.routeOptions.config.access ?? 'token').includes(code)) return `${route}: answered ${code}, which its schema's errors do not list`;
    if (errorStatus(code) !== status) return `${route}: answered ${code} with status ${status}, not ${errorStatus(code)}`;
  }
  const plain: unknown = JSON.parse(JSON.stringify(payload));
  const text = reply.serialize(payload);
  const serialized: unknown = JSON.parse(typeof text === 'string' ? text : Buffer.from(text as ArrayBuffer).toString('utf8'));
  if (isDeepStrictEqual(plain, serialized)) return null;
  return `${route} (${status}): the response schema changed the answer at ${difference(plain, serialized, '$')}`;
}

/** The first path where two JSON values differ, with both sides. */
function difference(a: unknown, b: unknown, path: string): string {
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null && Array.isArray(a) === Array.isArray(b)) {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    for (const key of keys) {
      const left = own(a as Record<string, unknown>, key);
      const right = own(b as Record<string, unknown>, key);
      if (!isDeepStrictEqual(left, right)) return difference(left, right, `${path}.${key}`);
    }
  }
  return `${path}: sent ${JSON.stringify(a) ?? 'nothing'}, serialized ${JSON.stringify(b) ?? 'nothing'}`;
}
