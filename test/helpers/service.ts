/* eslint-disable @typescript-eslint/no-explicit-any --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
// Shared by the server, client and CLI tests: an app on a memory queue, and request helpers.
import type { FastifyInstance } from 'fastify';
import { after, before } from 'node:test';
import { DelayQClient } from '../../src/client/index.js';
import type { Clock } from '../../src/core/ports/index.js';
import { DelayQueue } from '../../src/open-queue.js';
import type { PushOptions } from '../../src/push-wiring.js';
import { buildApp } from '../../src/server/app.js';
import type { ServerLimits } from '../../src/server/limits.js';

export interface TestApp {
  readonly app: FastifyInstance;
  readonly queue: DelayQueue;
  close(): Promise<void>;
}

export async function openTestApp(options: { token?: string; limits?: Partial<ServerLimits>; clock?: Clock; push?: PushOptions; events?: boolean } = {}): Promise<TestApp> {
  const queue = await DelayQueue.open({ ...(options.clock ? { clock: options.clock } : {}), ...(options.push ? { push: options.push } : {}), ...(options.events ? { events: true } : {}) });
  const app = await buildApp({ queue, logger: false, checkResponses: true, ...(options.token ? { token: options.token } : {}), ...(options.limits ? { limits: options.limits } : {}) });
  return {
    app,
    queue,
    close: async () => {
      await app.close();
      await queue.close();
    },
  };
}

/** A suite's server: a test app listening on an ephemeral port, and a client of it. */
export interface ListeningApp {
  readonly t: TestApp;
  readonly url: string;
  readonly client: DelayQClient;
}

/**
 * Opens a test app listening on an ephemeral port, with a client, before the calling
 * suite's tests, and closes it after them. Read the fields inside tests (they are set in the
 * suite's `before`).
 */
export function useListeningApp(options: Parameters<typeof openTestApp>[0] = {}): ListeningApp {
  let opened: ListeningApp | undefined;
  before(async () => {
    const t = await openTestApp(options);
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 });
    opened = { t, url, client: new DelayQClient({ url }) };
  });
  after(() => opened?.t.close());
  const get = (): ListeningApp => {
    if (opened === undefined) throw new Error('useListeningApp: read inside a test, once the suite opened it');
    return opened;
  };
  return {
    get t() {
      return get().t;
    },
    get url() {
      return get().url;
    },
    get client() {
      return get().client;
    },
  };
}

export interface Answer<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Record<string, unknown>;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE' | 'PUT';
  url: string;
  /** An object is sent as JSON; a string is sent as it is. */
  body?: unknown;
  headers?: Record<string, string>;
}

export async function send<T = any>(app: FastifyInstance, spec: RequestSpec): Promise<Answer<T>> {
  const headers: Record<string, string> = { ...(spec.headers ?? {}) };
  let payload: string | undefined;
  if (typeof spec.body === 'string') payload = spec.body;
  else if (spec.body !== undefined) {
    payload = JSON.stringify(spec.body);
    headers['content-type'] ??= 'application/json';
  }
  // As the client does: a POST says JSON even with no body (the server refuses one that does not).
  if (spec.method === 'POST' && !('content-type' in headers)) headers['content-type'] = 'application/json';
  const response = await app.inject({ method: spec.method, url: spec.url, headers, ...(payload !== undefined ? { payload } : {}) });
  return { status: response.statusCode, body: response.body.length > 0 ? (JSON.parse(response.body) as T) : (undefined as T), headers: response.headers };
}
