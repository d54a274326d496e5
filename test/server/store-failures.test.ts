/* eslint-disable @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-argument --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
// Store failures and unexpected errors on the wire: every library code has its status, a
// store that is down answers 503, and a bug answers 500 INTERNAL_ERROR without its details.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DelayQError, ERROR_CODES, type ErrorCode } from '../../src/core/errors.js';
import type { TaskRoles, TaskStore } from '../../src/core/ports/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { CORE_ERROR_STATUS, HttpError, SERVER_ERROR_CODES, toWireError } from '../../src/server/errors.js';
import { MemoryStore } from '../../src/stores/memory/memory-store.js';
import { send } from '../helpers/service.js';

/** A memory store whose `method` fails with `error` while `failing` is true. */
function faultyStore(method: keyof TaskRoles, error: () => Error): { store: TaskStore; state: { failing: boolean } } {
  const state = { failing: false };
  const inner = new MemoryStore();
  const tasks = new Proxy(inner.tasks, {
    get(target, key) {
      const value = Reflect.get(target, key, target) as unknown;
      if (key === method && typeof value === 'function')
        return (...args: unknown[]) => (state.failing ? Promise.reject(error()) : (value as (...a: unknown[]) => unknown).apply(target, args));
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  const store = new Proxy(inner, {
    get(target, key) {
      if (key === 'tasks') return tasks;
      const value = Reflect.get(target, key, target) as unknown;
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { store, state };
}

describe('errors from the store and from bugs', () => {
  it('maps every library code and every server code to its status', () => {
    for (const code of Object.keys(ERROR_CODES) as ErrorCode[]) {
      const wire = toWireError(new DelayQError(code, 'x'));
      assert.equal(wire?.status, CORE_ERROR_STATUS[code], code);
      assert.equal(wire?.body.error.code, code);
    }
    for (const code of Object.keys(SERVER_ERROR_CODES) as (keyof typeof SERVER_ERROR_CODES)[])
      assert.equal(toWireError(new HttpError(code, 'x'))?.status, SERVER_ERROR_CODES[code].status, code);
    assert.equal(toWireError(new Error('bug')), null);
  });

  it('a store that is down answers 503 STORE_UNAVAILABLE, and the next call works again', async () => {
    const { store, state } = faultyStore('schedule', () => new DelayQError('STORE_UNAVAILABLE', 'disk on fire'));
    const queue = await DelayQueue.open({ store });
    const app = await buildApp({ queue, logger: false });
    try {
      state.failing = true;
      const down = await send(app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a' } });
      assert.deepEqual([down.status, down.body.error.code], [503, 'STORE_UNAVAILABLE']);
      const batch = await send(app, { method: 'POST', url: '/v1/tasks/batch', body: { tasks: [{ topic: 'a' }, { topic: 'bad topic' }] } });
      assert.deepEqual([batch.status, batch.body.error.code], [503, 'STORE_UNAVAILABLE']);
      state.failing = false;
      assert.equal((await send(app, { method: 'POST', url: '/v1/tasks', body: { topic: 'a' } })).status, 201);
    } finally {
      await app.close();
      await queue.close();
    }
  });

  it('an unexpected error answers 500 INTERNAL_ERROR without leaking its message', async () => {
    const { store, state } = faultyStore('get', () => new TypeError('secret internals'));
    const queue = await DelayQueue.open({ store });
    const app = await buildApp({ queue, logger: false });
    try {
      state.failing = true;
      const res = await send(app, { method: 'GET', url: '/v1/tasks/x' });
      assert.equal(res.status, 500);
      assert.equal(res.body.error.code, 'INTERNAL_ERROR');
      assert.doesNotMatch(res.body.error.message, /secret/);
    } finally {
      await app.close();
      await queue.close();
    }
  });
});
