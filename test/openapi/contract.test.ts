/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-argument, @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-return --
   the OpenAPI document is untyped JSON here; each field used is checked by an assertion. */
/**
 * /openapi.json judged from the outside, on a real server on an ephemeral port: redocly's
 * linter (recommended rules), openapi-typescript's types, and a client written against those
 * types (test/openapi/generated-client/) type-checked by tsc (strict) and run against the
 * server. Also: every route is in the document or deliberately hidden, and the response
 * check of the test apps (checkResponses) does catch a field a schema would drop.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { DelayQError } from '../../src/core/errors.js';
import { DelayQueue } from '../../src/open-queue.js';
import { buildApp } from '../../src/server/app.js';
import { routeRegistry, undocumented } from '../../src/server/openapi.js';
import { apiRoute } from '../../src/server/route-schema.js';
import { openTestApp, send, type RequestSpec, type TestApp } from '../helpers/service.js';

const ROOT = resolve(import.meta.dirname, '..', '..');
const BIN = join(ROOT, 'node_modules', '.bin');

function run(command: string, args: readonly string[]): { code: number | null; out: string } {
  const result = spawnSync(command, args, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 180_000,
    env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' },
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

describe('the OpenAPI document, from the outside', () => {
  let t: TestApp;
  let base: string;
  let dir: string;
  let doc: any;

  before(async () => {
    t = await openTestApp();
    base = await t.app.listen({ host: '127.0.0.1', port: 0 });
    // Inside the project, so the copied client finds undici and the wire types.
    mkdirSync(join(ROOT, 'tmp'), { recursive: true });
    dir = mkdtempSync(join(ROOT, 'tmp', 'openapi-'));
    const answer = await request(`${base}/openapi.json`);
    assert.equal(answer.statusCode, 200);
    doc = await answer.body.json();
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('passes redocly lint (recommended rules) with no error and no warning (every route answers 400 BAD_REQUEST to a request without Host)', () => {
    const { code, out } = run(process.execPath, [join(BIN, 'redocly'), 'lint', '--format=json', join(dir, 'openapi.json')]);
    const report = JSON.parse(out.slice(out.indexOf('{'), out.lastIndexOf('}') + 1)) as { totals: { errors: number; warnings: number }; problems: { ruleId: string; location: { pointer: string }[] }[] };
    assert.equal(code, 0, out);
    assert.equal(report.totals.errors, 0);
    assert.deepEqual(
      report.problems.map((p) => `${p.ruleId} ${p.location[0]?.pointer ?? ''}`).sort(),
      [],
    );
  });

  it('names, tags and describes every operation: a schema on every answer, the Error envelope on each 4xx and 5xx, typed query parameters, servers', () => {
    assert.deepEqual(doc.servers, [{ url: '/', description: 'the server that serves this document' }]);
    const ids = new Set<string>();
    const tags = new Set((doc.tags as { name: string }[]).map((tag) => tag.name));
    let operations = 0;
    for (const [path, item] of Object.entries<any>(doc.paths))
      for (const [method, op] of Object.entries<any>(item)) {
        const where = `${method.toUpperCase()} ${path}`;
        operations++;
        assert.match(op.operationId, /^[a-z][A-Za-z]+$/, where);
        assert.ok(!ids.has(op.operationId), `${where}: operationId ${op.operationId} twice`);
        ids.add(op.operationId);
        assert.ok(op.tags.length === 1 && tags.has(op.tags[0]), where);
        for (const [status, answer] of Object.entries<any>(op.responses)) {
          const [type, media] = Object.entries<any>(answer.content)[0]!;
          // The probes' 503s are their own answers, not errors (/readyz says why only with the token).
          if (Number(status) >= 400 && !((path === '/healthz' || path === '/readyz') && status === '503')) {
            assert.deepEqual(media.schema, { $ref: '#/components/schemas/Error' }, `${where} ${status}`);
            assert.match(answer.description, /: [A-Z_]+(, [A-Z_]+)*$/, `${where} ${status} names its codes`);
          } else if (type === 'application/json' && path !== '/openapi.json') {
            // A real schema: a reference, or an object that names its properties, or a union of them.
            const schema = media.schema;
            assert.ok(schema.$ref !== undefined || schema.oneOf !== undefined || (schema.additionalProperties === false && Object.keys(schema.properties).length > 0), `${where} ${status}`);
          }
        }
        for (const parameter of op.parameters ?? []) assert.ok(parameter.schema.type === 'integer' || parameter.schema.type === 'string', `${where} ${parameter.name}`);
      }
    assert.equal(operations, 42);
    const listTasks = doc.paths['/v1/tasks'].get;
    assert.deepEqual(
      listTasks.parameters.map((p: any) => [p.name, p.schema.type, p.schema.minimum, p.schema.maximum, p.schema.enum]),
      [['topic', 'string', undefined, undefined, undefined], ['state', 'string', undefined, undefined, ['pending', 'reserved', 'completed', 'dead', 'cancelled']], ['limit', 'integer', 1, 10_000, undefined], ['after', 'string', undefined, undefined, undefined]],
    );
    assert.deepEqual(Object.keys(doc.paths['/v1/tasks/{id}'].get.responses), ['200', '400', '401', '404', '414', '421', '500', '503']);
    assert.match(doc.paths['/v1/tasks/{id}'].get.responses['404'].description, /TASK_NOT_FOUND/);
    assert.deepEqual(doc.paths['/healthz'].get.security, []);
    assert.deepEqual(Object.keys(doc.components.schemas.Error.properties.error.properties), ['code', 'message', 'details']);
    assert.deepEqual(doc.components.schemas.Task.properties.payload, { description: 'any JSON value, as scheduled' });
  });

  it('leaves out no route of the server, except the dashboard and the API reference pages', () => {
    const registry = routeRegistry(t.app);
    assert.ok(registry !== undefined);
    assert.deepEqual(undocumented(registry).map(({ method, url }) => `${method} ${url}`), []);
    assert.ok(registry.all.some(({ url }) => url === '/ui/config.json'), 'the dashboard is registered, and hidden');
  });

  it('generates types with openapi-typescript; a client written against them type-checks (tsc strict), and they are the wire types', () => {
    const generated = run(process.execPath, [join(BIN, 'openapi-typescript'), join(dir, 'openapi.json'), '-o', join(dir, 'api.d.ts')]);
    assert.equal(generated.code, 0, generated.out);
    cpSync(join(ROOT, 'test', 'openapi', 'generated-client'), dir, { recursive: true });
    // A mistake tsc must catch, so a pass means the types were read: runAt is a number.
    writeFileSync(join(dir, 'mistake.ts'), "import type { components } from './api.js';\nexport const wrong: string = ({} as components['schemas']['ScheduleResult']).runAt;\n");
    writeFileSync(
      join(dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          lib: ['ES2023'],
          types: ['node'],
          strict: true,
          noUncheckedIndexedAccess: true,
          exactOptionalPropertyTypes: true,
          noPropertyAccessFromIndexSignature: true,
          verbatimModuleSyntax: true,
          skipLibCheck: true,
          noEmit: true,
        },
        files: readdirSync(dir).filter((name) => name.endsWith('.ts')),
      }),
    );
    const tsc = run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', join(dir, 'tsconfig.json')]);
    const errors = tsc.out.split('\n').filter((line) => line.includes('error TS'));
    assert.equal(errors.length, 1, tsc.out);
    assert.match(errors[0]!, /mistake\.ts\(2,14\): error TS2322: Type 'number' is not assignable to type 'string'/);
  });

  it('the generated client schedules, reads, reserves, acks and cancels on the real server, and reads an error through the Error schema', async () => {
    // The copy beside the generated types (the one in the repository has none to import).
    const client = (await import(pathToFileURL(join(dir, 'client.ts')).href)) as { run(base: string, topic: string): Promise<any> };
    const result = await client.run(base, 'openapi-client');
    assert.equal(result.scheduled.status, 201);
    assert.equal(result.scheduled.created, true);
    assert.equal(typeof result.scheduled.runAt, 'number');
    assert.deepEqual(result.read, { state: 'pending', runAt: result.scheduled.runAt, attempts: 0, lastError: null, payload: { orderId: 42, items: ['a', 'b'] } });
    assert.equal(result.reserved.id, result.scheduled.id);
    assert.equal(result.reserved.attempt, 1);
    assert.ok(result.reserved.receipt.length > 0 && result.reserved.reservedUntil > result.scheduled.runAt);
    assert.deepEqual(result.reserved.payload, { orderId: 42, items: ['a', 'b'] });
    assert.deepEqual([result.acked, result.afterAck, result.cancelled], [true, 'completed', true]);
    assert.deepEqual(result.error, { status: 404, code: 'TASK_NOT_FOUND', message: 'task no-such-task not found', id: 'no-such-task' });
  });
});

describe('every operation, answered through its response schema', () => {
  it('drives each operation of the document with checkResponses on: every answer (each branch of a union too) passes its schema unchanged', async () => {
    const t = await openTestApp({ push: { allow: ['127.0.0.1:9'] } });
    const seen = new Set<string>();
    const op = async (operationId: string, method: RequestSpec['method'], url: string, body?: unknown, status = 200): Promise<any> => {
      const answer = await send(t.app, { method, url, ...(body !== undefined ? { body } : {}) });
      assert.equal(answer.status, status, `${operationId}: ${JSON.stringify(answer.body)}`);
      seen.add(operationId);
      return answer.body;
    };
    try {
      const doc = await op('getOpenApi', 'GET', '/openapi.json');
      const all = Object.values<any>(doc.paths).flatMap((item) => Object.values<any>(item).map((operation) => operation.operationId as string));
      await op('getHealth', 'GET', '/healthz');
      await op('getReadiness', 'GET', '/readyz');
      await op('getMetrics', 'GET', '/metrics', undefined, 404); // this app keeps no metrics: ROUTE_NOT_FOUND, declared
      await op('streamEvents', 'GET', '/v1/events', undefined, 400); // this app writes no events: INVALID_OPTION, declared (test/server/events.test.ts streams them)
      const task = await op('scheduleTask', 'POST', '/v1/tasks', { id: 't1', topic: 'tour', payload: { deep: [1, { a: null }] }, delayMs: 0, maxAttempts: 1 }, 201);
      await op('scheduleTask', 'POST', '/v1/tasks', { id: 't1', topic: 'tour' }, 200);
      const batch = await op('scheduleTasks', 'POST', '/v1/tasks/batch', { tasks: [{ topic: 'tour', delayMs: 3_600_000 }, { topic: 'bad topic' }] });
      assert.deepEqual([Object.keys(batch.results[0]).sort(), batch.results[1].error.code, batch.results[1].error.details.index], [['created', 'id', 'runAt'], 'INVALID_TOPIC', 1]);
      const later: string = batch.results[0].id;
      assert.equal((await op('getTask', 'GET', '/v1/tasks/t1')).payload.deep[1].a, null);
      const page = await op('listTasks', 'GET', '/v1/tasks?topic=tour&state=pending&limit=1');
      assert.deepEqual([page.tasks.length, page.next], [1, page.tasks[0].id]);
      await op('rescheduleTask', 'PATCH', `/v1/tasks/${later}`, { delayMs: 7_200_000 });
      const [delivery] = (await op('reserveTasks', 'POST', '/v1/topics/tour/reserve', { max: 1 })).tasks;
      assert.equal(delivery.id, task.id);
      assert.deepEqual(await op('nackTask', 'POST', '/v1/tasks/t1/nack', { receipt: delivery.receipt, error: 'boom' }), { state: 'dead' });
      await op('retryDeadTask', 'POST', '/v1/tasks/t1/retry', {});
      const again = (await op('reserveTasks', 'POST', '/v1/topics/tour/reserve', {})).tasks[0];
      await op('nackTask', 'POST', '/v1/tasks/t1/nack', { receipt: again.receipt });
      assert.deepEqual(await op('retryDeadTasks', 'POST', '/v1/topics/tour/dead/retry', {}), { retried: 1, more: false });
      const third = (await op('reserveTasks', 'POST', '/v1/topics/tour/reserve', {})).tasks[0];
      await op('nackTask', 'POST', '/v1/tasks/t1/nack', { receipt: third.receipt });
      assert.deepEqual(await op('cancelDeadTasks', 'POST', '/v1/topics/tour/dead/cancel', {}), { cancelled: 1, more: false });
      await op('scheduleTask', 'POST', '/v1/tasks', { id: 't2', topic: 'tour2', maxAttempts: 2 }, 201);
      await op('scheduleTask', 'POST', '/v1/tasks', { id: 't3', topic: 'tour2' }, 201);
      const [d2, d3] = (await op('reserveTasks', 'POST', '/v1/topics/tour2/reserve', { max: 2 })).tasks;
      const pending = await op('nackTask', 'POST', `/v1/tasks/${d2.id}/nack`, { receipt: d2.receipt, delayMs: 60_000 });
      assert.deepEqual(Object.keys(pending).sort(), ['runAt', 'state']);
      const acks = await op('ackTasks', 'POST', '/v1/tasks/ack', { acks: [{ id: d3.id, receipt: d3.receipt }, { id: d2.id, receipt: d2.receipt }] });
      assert.deepEqual([acks.results[0].acked, acks.results[1].error.code], [true, 'STALE_RECEIPT']);
      await op('scheduleTask', 'POST', '/v1/tasks', { id: 't4', topic: 'tour3' }, 201);
      const d4 = (await op('reserveTasks', 'POST', '/v1/topics/tour3/reserve', {})).tasks[0];
      const extended = await op('extendTask', 'POST', '/v1/tasks/t4/extend', { receipt: d4.receipt, ttrMs: 60_000 });
      assert.ok(extended.reservedUntil >= d4.reservedUntil);
      await op('ackTask', 'POST', '/v1/tasks/t4/ack', { receipt: d4.receipt });
      await op('cancelTask', 'DELETE', `/v1/tasks/${later}`);
      await op('cancelTasks', 'POST', '/v1/tasks/cancel', { ids: ['t2', 'nope'] });
      const created = await op('setPushSubscription', 'PUT', '/v1/topics/hooked/push', { url: 'http://127.0.0.1:9/hook', headers: { 'x-team': 'a' } }, 201);
      assert.match(created.secret, /^whsec_/);
      await op('setPushSubscription', 'PUT', '/v1/topics/hooked/push', { url: 'http://127.0.0.1:9/hook', timeoutMs: 5_000 });
      await op('getPushSubscription', 'GET', '/v1/topics/hooked/push');
      await op('listPushSubscriptions', 'GET', '/v1/push');
      await op('putSchedule', 'PUT', '/v1/schedules/daily', { topic: 'cron', cron: '0 9 * * *', tz: 'Europe/Paris', payload: [1, 'two'] }, 201);
      assert.equal((await op('putSchedule', 'PUT', '/v1/schedules/daily', { topic: 'cron', cron: '0 9 * * *', tz: 'Europe/Paris', payload: [1, 'two'] })).changed, false);
      await op('putSchedules', 'PUT', '/v1/schedules', [{ id: 'often', topic: 'cron', everyMs: 60_000, limit: 3 }]);
      await op('getSchedule', 'GET', '/v1/schedules/daily');
      await op('listSchedules', 'GET', '/v1/schedules?limit=1');
      await op('pauseSchedule', 'POST', '/v1/schedules/daily/pause');
      await op('resumeSchedule', 'POST', '/v1/schedules/daily/resume');
      assert.equal((await op('nextScheduleTimes', 'GET', '/v1/schedules/daily/next?n=3')).times.length, 3);
      assert.deepEqual((await op('previewSchedule', 'POST', '/v1/schedules/preview', { cron: '0 9 * * *', tz: 'Europe/Paris', n: 3 })).times, await t.queue.schedules.next('daily', 3));
      await op('deleteSchedule', 'DELETE', '/v1/schedules/often');
      await op('deletePushSubscription', 'DELETE', '/v1/topics/hooked/push');
      await op('getTimeline', 'GET', '/v1/timeline?bucketMs=120000&topic=tour');
      const stats = await op('getStats', 'GET', '/v1/stats?topicLimit=2');
      assert.equal(stats.topicsNext !== undefined && 'push' in stats, true);
      await op('getActivity', 'GET', '/v1/activity');
      assert.deepEqual(await op('purgeTopic', 'DELETE', '/v1/topics/tour2/tasks?state=completed'), { purged: 2 }, 't3 acked, t2 cancelled');
      assert.deepEqual(await op('pauseTopic', 'POST', '/v1/topics/tour2/pause'), { topic: 'tour2', paused: true, changed: true });
      assert.deepEqual(await op('resumeTopic', 'POST', '/v1/topics/tour2/resume'), { topic: 'tour2', paused: false, changed: true });
      const limited = { topic: 'tour2', limits: { rate: 10, periodMs: 1000, burst: 10, concurrency: 2 } };
      assert.deepEqual(await op('setTopicLimits', 'PUT', '/v1/topics/tour2/limits', { rate: 10, concurrency: 2 }), limited);
      assert.deepEqual(await op('getTopicLimits', 'GET', '/v1/topics/tour2/limits'), limited);
      assert.deepEqual(await op('clearTopicLimits', 'DELETE', '/v1/topics/tour2/limits'), { deleted: true });
      assert.deepEqual([...seen].sort(), [...new Set(all)].sort());
    } finally {
      await t.close();
    }
  });
});

describe('checkResponses (on in every test app)', () => {
  it('fails an answer its response schema would change, and an error code its route does not declare; without it the field is silently dropped', async () => {
    const answers: unknown[] = [];
    for (const checkResponses of [true, false]) {
      const queue = await DelayQueue.open();
      const app = await buildApp({ queue, logger: false, checkResponses });
      const schema = (operationId: string) => apiRoute({ operationId, tags: ['system'], summary: 'a test route', ok: { 200: { type: 'object', additionalProperties: false, properties: { kept: { type: 'string' } } } } });
      app.get('/test/lossy', { schema: schema('lossy') }, async () => ({ kept: 'yes', dropped: 1 }));
      app.get('/test/undeclared', { schema: schema('undeclared') }, async () => {
        throw new DelayQError('TASK_NOT_FOUND', 'task x not found', { id: 'x' });
      });
      const warnings: string[] = [];
      const onWarning = (warning: Error): void => void warnings.push(warning.message);
      process.on('warning', onWarning);
      try {
        const lossy = await send(app, { method: 'GET', url: '/test/lossy' });
        const undeclared = await send(app, { method: 'GET', url: '/test/undeclared' });
        answers.push([lossy.status, lossy.body, undeclared.status, undeclared.body?.error?.code]);
        await new Promise((done) => setImmediate(done));
        if (checkResponses) {
          assert.ok(warnings.some((w) => w.includes('GET /test/lossy (200): the response schema changed the answer at $.dropped: sent 1, serialized nothing')), warnings.join('\n'));
          assert.ok(warnings.some((w) => w.includes("GET /test/undeclared: answered TASK_NOT_FOUND, which its schema's errors do not list")), warnings.join('\n'));
        }
      } finally {
        process.off('warning', onWarning);
        await app.close();
        await queue.close();
      }
    }
    const [checked, unchecked] = answers as [unknown[], unknown[]];
    assert.equal(checked[0], 500);
    assert.equal(checked[2], 500);
    assert.deepEqual(unchecked, [200, { kept: 'yes' }, 404, 'TASK_NOT_FOUND']);
  });
});
