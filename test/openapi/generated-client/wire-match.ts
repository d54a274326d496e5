/**
 * Compile-time: the types generated from /openapi.json are the wire types of
 * src/wire/types.ts, both ways (each assignable to the other), so the document names every
 * field the server's answers carry, with its type, and no other. Checked by tsc with the
 * generated ./api.d.ts beside a copy of this file (test/openapi/contract.test.ts).
 */
import type { components, paths } from './api.js';
import type {
  AckManyResponse,
  BatchResponse,
  CancelManyResponse,
  DeliveryView,
  ErrorBody,
  ExtendResponse,
  ListResponse,
  NackResponse,
  PushListResponse,
  PushSubscriptionResponse,
  RecurringListResponse,
  RecurringManyResponse,
  RecurringResponse,
  RescheduleResponse,
  ScheduleResponse,
  StatsResponse,
  TaskView,
  TimelineResponse,
} from '../../src/wire/types.js';

type S = components['schemas'];
type Ok<P extends keyof paths, M extends 'get' | 'post' | 'put' | 'patch' | 'delete'> =
  NonNullable<paths[P][M]> extends { responses: { 200: { content: { 'application/json': infer A } } } } ? A : never;
/** A wire type as JSON carries it: no `undefined` values (`Partial<Record<string, number>>` is `Record<string, number>`). */
type Json<T> = T extends readonly (infer U)[] ? Json<U>[] : T extends object ? { [K in keyof T]: Json<Exclude<T[K], undefined>> } : T;
type Same<A, W> = [A] extends [Json<W>] ? ([Json<W>] extends [A] ? true : false) : false;

export const same: {
  task: Same<S['Task'], TaskView>;
  delivery: Same<S['Delivery'], DeliveryView>;
  scheduled: Same<S['ScheduleResult'], ScheduleResponse>;
  error: Same<S['Error'], ErrorBody>;
  list: Same<Ok<'/v1/tasks', 'get'>, ListResponse>;
  batch: Same<Ok<'/v1/tasks/batch', 'post'>, BatchResponse>;
  ackMany: Same<Ok<'/v1/tasks/ack', 'post'>, AckManyResponse>;
  cancelMany: Same<Ok<'/v1/tasks/cancel', 'post'>, CancelManyResponse>;
  reschedule: Same<Ok<'/v1/tasks/{id}', 'patch'>, RescheduleResponse>;
  nack: Same<Ok<'/v1/tasks/{id}/nack', 'post'>, NackResponse>;
  extend: Same<Ok<'/v1/tasks/{id}/extend', 'post'>, ExtendResponse>;
  stats: Same<Ok<'/v1/stats', 'get'>, StatsResponse>;
  timeline: Same<Ok<'/v1/timeline', 'get'>, TimelineResponse>;
  push: Same<Ok<'/v1/topics/{topic}/push', 'get'>, PushSubscriptionResponse>;
  pushList: Same<Ok<'/v1/push', 'get'>, PushListResponse>;
  schedule: Same<Ok<'/v1/schedules/{id}', 'get'>, RecurringResponse>;
  schedules: Same<Ok<'/v1/schedules', 'get'>, RecurringListResponse>;
  schedulesMany: Same<Ok<'/v1/schedules', 'put'>, RecurringManyResponse>;
} = {
  task: true,
  delivery: true,
  scheduled: true,
  error: true,
  list: true,
  batch: true,
  ackMany: true,
  cancelMany: true,
  reschedule: true,
  nack: true,
  extend: true,
  stats: true,
  timeline: true,
  push: true,
  pushList: true,
  schedule: true,
  schedules: true,
  schedulesMany: true,
};
