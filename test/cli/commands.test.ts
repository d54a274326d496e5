// The `delayq` commands, each run as a real process against a listening app (memory queue):
// output in both forms, exit codes 0 / 1 / 2.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { openTestApp, type TestApp } from '../helpers/service.js';
import { runCliProcess, type CliResult } from '../helpers/service-process.js';

describe('delayq CLI', () => {
  let t: TestApp;
  let url: string;
  const dir = mkdtempSync(join(tmpdir(), 'delayq-cli-'));
  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(['--server', url, '--token', 'cli-token', ...args]);
  const json = <T>(result: CliResult): T => {
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as T;
  };

  before(async () => {
    t = await openTestApp({ token: 'cli-token' });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('add, get, touch, cancel, ls, stats with --json', async () => {
    const added = json<{ id: string; created: boolean; runAt: number }>(await cli('add', 'orders', '--id', 'o1', '--delay', '30m', '--payload', '{"order":1}', '--json'));
    assert.equal(added.id, 'o1');
    assert.ok(added.runAt > Date.now() + 29 * 60_000);
    const at = json<{ runAt: number }>(await cli('add', 'orders', '--id', 'o2', '--at', '2031-01-01T00:00:00Z', '--json'));
    assert.equal(at.runAt, Date.UTC(2031, 0, 1));
    const [got, touched] = await Promise.all([cli('get', 'o1', '--json'), cli('touch', 'o2', '--delay', '5s', '--json')]);
    assert.deepEqual(json<{ payload: unknown }>(got).payload, { order: 1 });
    assert.ok(json<{ runAt: number }>(touched).runAt < Date.now() + 10_000);
    assert.deepEqual(json(await cli('cancel', 'o1', '--json')), { id: 'o1', cancelled: true });
    await cli('add', 'orders', '--id', 'o3', '--delay', '1h');
    const several = await cli('cancel', 'o3', 'o1');
    assert.equal(several.code, 1);
    assert.equal(several.stdout, 'cancelled o3\nnot cancelled o1\n');
    assert.match(several.stderr, /^delayq: TASK_NOT_PENDING: not cancelled \(unknown or no longer pending\): o1/);
    const [listed, stats] = await Promise.all([cli('ls', '--topic', 'orders', '--state', 'pending', '--json'), cli('stats', '--json')]);
    assert.deepEqual(json<{ id: string }[]>(listed).map((x) => x.id), ['o2']);
    assert.equal(json<{ counts: { cancelled: number } }>(stats).counts.cancelled, 2);
  });

  it('add --priority: kept and shown by get; out of bounds is a usage error', async () => {
    await cli('add', 'ranked', '--id', 'r1', '--delay', '1h', '--priority', '-40');
    assert.equal(json<{ priority: number }>(await cli('get', 'r1', '--json')).priority, -40);
    assert.match((await cli('get', 'r1')).stdout, /\npriority\s+-40\n/);
    for (const bad of ['101', '1.5', 'high']) {
      const refused = await cli('add', 'ranked', '--priority', bad);
      assert.notEqual(refused.code, 0, bad);
      assert.match(refused.stderr, /-100 to 100/);
    }
  });

  it('prints human tables without --json', async () => {
    await cli('add', 'human', '--id', 'h1', '--delay', '1h');
    const [ls, get, stats] = await Promise.all([cli('ls', '--topic', 'human'), cli('get', 'h1'), cli('stats')]);
    assert.match(ls.stdout, /^ID\s+TOPIC\s+STATE\s+RUN AT\s+ATTEMPTS\nh1\s+human\s+pending\s+\S+ \(in 5\dm/);
    assert.match(get.stdout, /^id\s+h1\ntopic\s+human\nstate\s+pending/);
    assert.match(stats.stdout, /store\s+memory/);
    assert.match(stats.stdout, /TOPIC\s+PENDING/);
  });

  it('exits 1 with the code when a request fails', async () => {
    await cli('add', 'x', '--id', 'done1');
    await t.queue.reserve('x');
    const results = await Promise.all([
      cli('get', 'missing'),
      cli('cancel', 'missing'),
      cli('cancel', 'done1'),
      cli('touch', 'done1', '--delay', '5s'),
      cli('add', 'bad topic'),
      cli('add', 'x', '--at', '2031-02-29T09:00:00Z'),
      runCliProcess(['--server', url, 'stats']),
      runCliProcess(['--server', 'http://127.0.0.1:1', 'stats']),
    ]);
    const codes = ['TASK_NOT_FOUND', 'TASK_NOT_FOUND', 'TASK_NOT_PENDING', 'TASK_NOT_PENDING', 'INVALID_TOPIC', 'INVALID_DELAY', 'UNAUTHORIZED', 'SERVER_UNREACHABLE'];
    results.forEach((r, i) => {
      assert.equal(r.code, 1, `${codes[i]}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^delayq: ${codes[i]}: `));
    });
  });

  it('exits 2 on bad usage', async () => {
    const results = await Promise.all([
      cli('add'),
      cli('add', 'x', '--delay', 'soon'),
      cli('add', 'x', '--delay', '5s', '--at', '2031-01-01T00:00:00Z'),
      cli('add', 'x', '--payload', '{nope'),
      cli('touch', 'x'),
      cli('ls', '--state', 'sleeping'),
      cli('frobnicate'),
      cli('get', 'x', '--bogus'),
      cli('import', join(dir, 'does-not-exist.ndjson')),
    ]);
    results.forEach((r, i) => assert.equal(r.code, 2, `case ${i}: ${r.stderr}`));
    assert.equal((await cli('--help')).code, 0);
  });

  it('import schedules an NDJSON file in batches with progress on stderr', async () => {
    const file = join(dir, 'tasks.ndjson');
    const lines = Array.from({ length: 2_500 }, (_, i) => JSON.stringify({ id: `imp-${i}`, topic: 'imported', delayMs: 3_600_000, payload: { i } }));
    lines.splice(10, 0, '', 'not json', JSON.stringify({ topic: 'bad topic' }));
    writeFileSync(file, `${lines.join('\n')}\n`);
    const result = await cli('import', file, '--batch-size', '1000', '--json');
    assert.equal(result.code, 1, result.stderr);
    const report = JSON.parse(result.stdout) as { created: number; refused: number; refusals: { line: number; code: string }[] };
    assert.equal(report.created, 2_500);
    assert.deepEqual(report.refusals.map((r) => [r.line, r.code]), [[12, 'INVALID_JSON'], [13, 'INVALID_TOPIC']]);
    assert.match(result.stderr, /\[#+\] 100% 2500 tasks/);
    assert.match(result.stderr, /IMPORT_INCOMPLETE/);
    assert.equal((await t.queue.stats()).topics['imported']?.pending, 2_500);
    const again = await cli('import', file);
    assert.match(again.stdout, /^0 scheduled, 2500 already existed, 2 refused/);
  });

  it('demo plays the three cases and passes', async () => {
    // --speed 2: a keepalive every 250 ms against a 1 s timeout. At --speed 4 (125 ms against
    // 500 ms) a CLI process starved on a loaded host sent one late and a live connection
    // fired: DEMO_FAILED with unexpected ids (seen at load 10-15).
    const result = await cli('demo', '--speed', '2', '--json');
    assert.equal(result.code, 0, result.stderr + result.stdout);
    const events = result.stdout.trim().split('\n').map((line) => JSON.parse(line) as { case: string; event: string; id?: string });
    const fired = (what: RegExp): string[] => events.filter((e) => e.id !== undefined && what.test(e.event)).map((e) => e.id!.replace(/^demo-\w+-/, ''));
    assert.deepEqual(fired(/closed: still unpaid/).sort(), ['o1', 'o3', 'o5']);
    assert.deepEqual(fired(/auto-rated/).sort(), ['r1', 'r3']);
    assert.deepEqual(fired(/marked offline/).sort(), ['c3', 'c4']);
    assert.deepEqual(fired(/cancelled in time/).sort(), ['c1', 'c2', 'o2', 'o4', 'r2']);
  });
});
