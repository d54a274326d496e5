/**
 * A client written only against the types openapi-typescript generates from /openapi.json
 * (./api.d.ts, made by test/openapi/contract.test.ts in a temporary folder beside a copy of
 * this file): what a user of another code base would write. It is type-checked with tsc
 * (strict) and run against a real server; it knows nothing of delayq's own source.
 */
import { request } from 'undici';
import type { components, paths } from './api.js';

type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
/** The JSON body an operation takes. */
type Body<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** The JSON an operation answers with this status. */
type Answer<O, S extends number> = O extends { responses: { [K in S]: { content: { 'application/json': infer A } } } } ? A : never;

export type ApiError = components['schemas']['Error'];

async function call<A>(base: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: A }> {
  // Every POST says JSON, even with no body (the server refuses one that does not).
  const response = await request(new URL(path, base), {
    method: method.toUpperCase() as 'GET',
    headers: { 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: response.statusCode, body: (await response.body.json()) as A };
}

export interface Run {
  scheduled: { status: number; id: string; runAt: number; created: boolean };
  read: { state: string; runAt: number; attempts: number; lastError: string | null; payload: unknown };
  reserved: { id: string; attempt: number; receipt: string; reservedUntil: number; payload: unknown };
  acked: boolean;
  afterAck: string;
  cancelled: boolean;
  error: { status: number; code: ApiError['error']['code']; message: string; id: unknown };
}

export async function run(base: string, topic: string): Promise<Run> {
  type Schedule = Operation<'/v1/tasks', 'post'>;
  const order: Body<Schedule> = { topic, payload: { orderId: 42, items: ['a', 'b'] }, delayMs: 0, maxAttempts: 3 };
  const scheduled = await call<Answer<Schedule, 201>>(base, 'post', '/v1/tasks', order);
  const { id, runAt, created } = scheduled.body;

  type Get = Operation<'/v1/tasks/{id}', 'get'>;
  const task = (await call<Answer<Get, 200>>(base, 'get', `/v1/tasks/${encodeURIComponent(id)}`)).body;
  const attempts: number = task.attempts;
  const lastError: string | null = task.lastError;

  type Reserve = Operation<'/v1/topics/{topic}/reserve', 'post'>;
  const reserve: Body<Reserve> = { max: 1, waitMs: 2_000 };
  const { tasks } = (await call<Answer<Reserve, 200>>(base, 'post', `/v1/topics/${topic}/reserve`, reserve)).body;
  const delivery = tasks[0];
  if (delivery === undefined) throw new Error('reserve answered no task');

  type Ack = Operation<'/v1/tasks/{id}/ack', 'post'>;
  const ack: Body<Ack> = { receipt: delivery.receipt };
  const acked = (await call<Answer<Ack, 200>>(base, 'post', `/v1/tasks/${encodeURIComponent(delivery.id)}/ack`, ack)).body.acked;
  const afterAck = (await call<Answer<Get, 200>>(base, 'get', `/v1/tasks/${encodeURIComponent(id)}`)).body.state;

  const later = await call<Answer<Schedule, 201>>(base, 'post', '/v1/tasks', { topic, delayMs: 3_600_000 } satisfies Body<Schedule>);
  type Cancel = Operation<'/v1/tasks/{id}', 'delete'>;
  const cancelled = (await call<Answer<Cancel, 200>>(base, 'delete', `/v1/tasks/${encodeURIComponent(later.body.id)}`)).body.cancelled;

  // An error answer, read through the document's Error schema.
  const missing = await call<Answer<Get, 404>>(base, 'get', '/v1/tasks/no-such-task');
  const { code, message, details } = missing.body.error;

  return {
    scheduled: { status: scheduled.status, id, runAt, created },
    read: { state: task.state, runAt: task.runAt, attempts, lastError, payload: task.payload },
    reserved: { id: delivery.id, attempt: delivery.attempt, receipt: delivery.receipt, reservedUntil: delivery.reservedUntil, payload: delivery.payload },
    acked,
    afterAck,
    cancelled,
    error: { status: missing.status, code, message, id: details?.['id'] },
  };
}
