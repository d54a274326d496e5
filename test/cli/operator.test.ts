// The commands an operator reaches for, as real processes against a listening app (memory
// queue): retry (one dead task, a topic's), ls --sort runAt, add on a taken id, cron next
// in the schedule's zone and UTC (of a schedule, or of a rule with none stored), and demo cleaning up after itself (even interrupted).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { openTestApp, type TestApp } from '../helpers/service.js';
import { runCliProcess, type CliResult } from '../helpers/service-process.js';

describe('delayq operator commands', () => {
  let t: TestApp;
  let url: string;
  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(['--server', url, ...args]);

  /** A task of `topic` that failed its only attempt. */
  const dead = async (id: string, topic: string): Promise<void> => {
    await t.queue.schedule({ id, topic, payload: null, maxAttempts: 1 });
    const [delivery] = await t.queue.reserve(topic, { max: 1 });
    assert.equal(delivery?.id, id);
    await t.queue.nack(id, delivery.receipt, { error: 'boom' });
    assert.equal((await t.queue.get(id))?.state, 'dead');
  };

  before(async () => {
    t = await openTestApp();
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('retry <id>: a dead task back to pending; a task not dead or unknown exits 1 saying why', async () => {
    await dead('d1', 'mail');
    const retried = await cli('retry', 'd1');
    assert.equal(retried.code, 0, retried.stderr);
    assert.equal(retried.stdout, 'retried d1: pending, due now\n');
    const task = await t.queue.get('d1');
    assert.equal(task?.state, 'pending');
    assert.equal(task?.attempts, 0);
    const [again, missing] = await Promise.all([cli('retry', 'd1'), cli('retry', 'nope')]);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, 'delayq: TASK_NOT_DEAD: cannot retry task d1: it is pending, not dead\n');
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /^delayq: TASK_NOT_FOUND: task nope not found/);
  });

  it('retry --topic t --dead: every dead task of the topic, in rounds of --max', async () => {
    for (const id of ['s1', 's2', 's3']) await dead(id, 'sms');
    await dead('other', 'push-x');
    const result = await cli('retry', '--topic', 'sms', '--dead', '--max', '2', '--json');
    assert.equal(result.code, 0, result.stderr);
    assert.deepEqual(JSON.parse(result.stdout), { topic: 'sms', retried: 3 });
    for (const id of ['s1', 's2', 's3']) assert.equal((await t.queue.get(id))?.state, 'pending');
    assert.equal((await t.queue.get('other'))?.state, 'dead');
    assert.equal((await cli('retry', '--topic', 'sms', '--dead')).stdout, 'no dead tasks on sms\n');
    const usage = await Promise.all([cli('retry'), cli('retry', '--topic', 'sms'), cli('retry', 'x', '--topic', 'sms', '--dead')]);
    for (const r of usage) assert.equal(r.code, 2, r.stderr);
  });

  it('ls --sort runAt orders the page by run time; --state filters', async () => {
    await cli('add', 'sorted', '--id', 'a-late', '--delay', '3h');
    await cli('add', 'sorted', '--id', 'b-soon', '--delay', '1h');
    await cli('add', 'sorted', '--id', 'c-mid', '--delay', '2h');
    await cli('add', 'sorted', '--id', 'd-gone', '--delay', '30m');
    await cli('cancel', 'd-gone');
    const ids = async (...args: string[]): Promise<string[]> => (JSON.parse((await cli('ls', '--topic', 'sorted', '--json', ...args)).stdout) as { id: string }[]).map((x) => x.id);
    assert.deepEqual(await ids(), ['a-late', 'b-soon', 'c-mid', 'd-gone']);
    assert.deepEqual(await ids('--sort', 'runAt', '--state', 'pending'), ['b-soon', 'c-mid', 'a-late']);
    assert.deepEqual(await ids('--sort', 'runAt', '--state', 'cancelled'), ['d-gone']);
    assert.equal((await cli('ls', '--sort', 'topic')).code, 2);
    assert.match((await cli('ls', '--help')).stdout, /sorts the page fetched/);
  });

  it('add on a taken id says the state, and exits 1 when that task will not run', async () => {
    await cli('add', 'taken', '--id', 'p1', '--delay', '1h');
    const pending = await cli('add', 'taken', '--id', 'p1');
    assert.equal(pending.code, 0, pending.stderr);
    assert.match(pending.stdout, /^exists \(unchanged\): p1 is pending, runs at \S+ \(in 59m/);

    await cli('cancel', 'p1');
    const cancelled = await cli('add', 'taken', '--id', 'p1', '--json');
    assert.equal(cancelled.code, 1);
    assert.equal((JSON.parse(cancelled.stdout) as { state: string }).state, 'cancelled');
    assert.match(cancelled.stderr, /^delayq: TASK_EXISTS: task p1 already exists and is cancelled: nothing was scheduled and it will not run again; give another --id\n$/);

    await dead('p2', 'taken');
    const isDead = await cli('add', 'taken', '--id', 'p2');
    assert.equal(isDead.code, 1);
    assert.match(isDead.stdout, /^exists \(unchanged\): p2 is dead\n$/);
    assert.match(isDead.stderr, /or run delayq retry p2/);

    await t.queue.schedule({ id: 'p3', topic: 'taken', payload: null });
    const [delivery] = await t.queue.reserve('taken', { max: 1 });
    await t.queue.ack('p3', delivery?.receipt ?? '');
    assert.equal((await cli('add', 'taken', '--id', 'p3')).code, 1);
  });

  it('cron next prints each time in the schedule zone, with its offset, and in UTC', async () => {
    // 02:30 in Berlin: +01:00 in winter, +02:00 in summer.
    assert.equal((await cli('cron', 'set', 'berlin', 'backup', '--cron', '30 2 * * *', '--tz', 'Europe/Berlin')).code, 0);
    const result = await cli('cron', 'next', 'berlin', '-n', '3');
    assert.equal(result.code, 0, result.stderr);
    const [header, ...rows] = result.stdout.trim().split('\n');
    assert.match(header ?? '', /^LOCAL \(Europe\/Berlin\)\s+UTC\s+WHEN$/);
    assert.equal(rows.length, 3);
    for (const row of rows) {
      const match = /^(\d{4}-\d\d-\d\d) 02:30:00 \+0([12]):00\s+(\d{4}-\d\d-\d\d)T0([01]):30:00\.000Z\s+in /.exec(row);
      assert.ok(match, row);
      // The UTC hour is the local one minus the offset.
      assert.equal(Number(match[4]), 2 - Number(match[2]));
    }
    const json = JSON.parse((await cli('cron', 'next', 'berlin', '-n', '1', '--json')).stdout) as { times: number[]; tz: string; local: string[] };
    assert.equal(json.tz, 'Europe/Berlin');
    assert.match(json.local[0] ?? '', /^\d{4}-\d\d-\d\d 02:30:00 \+0[12]:00$/);
    assert.equal(new Date(json.times[0] ?? 0).getUTCMinutes(), 30);
    await cli('cron', 'rm', 'berlin');
  });

  it('cron next --cron/--tz previews a rule with no schedule stored; a bad rule or both an id and a rule are refused', async () => {
    // Issue 49: cron next could preview only a schedule that exists.
    const before = await t.queue.schedules.list();
    const result = await cli('cron', 'next', '--cron', '30 2 * * *', '--tz', 'Europe/Berlin', '-n', '3');
    assert.equal(result.code, 0, result.stderr);
    const [header, ...rows] = result.stdout.trim().split('\n');
    assert.match(header ?? '', /^LOCAL \(Europe\/Berlin\)\s+UTC\s+WHEN$/);
    assert.equal(rows.length, 3);
    for (const row of rows) assert.match(row, /^\d{4}-\d\d-\d\d 02:30:00 \+0[12]:00\s+\d{4}-\d\d-\d\dT0[01]:30:00\.000Z\s+in /);
    // The same times as a schedule of that rule would have.
    assert.equal((await cli('cron', 'set', 'same', 'backup', '--cron', '30 2 * * *', '--tz', 'Europe/Berlin')).code, 0);
    const stored = JSON.parse((await cli('cron', 'next', 'same', '-n', '3', '--json')).stdout) as { times: number[] };
    const previewed = JSON.parse((await cli('cron', 'next', '--cron', '30 2 * * *', '--tz', 'Europe/Berlin', '-n', '3', '--json')).stdout) as { times: number[]; tz: string };
    assert.deepEqual(previewed.times, stored.times);
    assert.equal(previewed.tz, 'Europe/Berlin');
    await cli('cron', 'rm', 'same');
    // An interval, from a start, capped by a limit.
    const start = Date.UTC(2031, 0, 1);
    const every = JSON.parse((await cli('cron', 'next', '--every', '90m', '--start', new Date(start).toISOString(), '--limit', '2', '--json')).stdout) as { times: number[]; tz: string };
    assert.deepEqual(every, { times: [start, start + 90 * 60_000], tz: 'UTC', local: ['2031-01-01 00:00:00 +00:00', '2031-01-01 01:30:00 +00:00'] });
    assert.deepEqual(await t.queue.schedules.list(), before, 'no schedule was stored');

    const bad = await cli('cron', 'next', '--cron', '61 * * * *');
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /^delayq: INVALID_SCHEDULE: cron: "61 \* \* \* \*" is not a valid pattern/);
    const zone = await cli('cron', 'next', '--cron', '0 * * * *', '--tz', 'Mars/Olympus');
    assert.equal(zone.code, 1);
    assert.match(zone.stderr, /INVALID_SCHEDULE: tz: unknown time zone "Mars\/Olympus"/);
    const both = await cli('cron', 'next', 'nightly', '--cron', '0 * * * *');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /give a schedule id or a rule \(--cron, --every\), not both/);
    const neither = await cli('cron', 'next');
    assert.equal(neither.code, 2);
    assert.match(neither.stderr, /give a schedule id, or a rule to preview with --cron or --every/);
  });

  it('topic purge <topic> --state s --yes purges; without --yes and no terminal to ask, or with a bad state, exits 2 and purges nothing', async () => {
    await dead('pd1', 'purgeable');
    await dead('pd2', 'purgeable');
    await t.queue.schedule({ id: 'pp1', topic: 'purgeable', delayMs: 600_000 });
    const unconfirmed = await cli('topic', 'purge', 'purgeable', '--state', 'dead');
    assert.equal(unconfirmed.code, 2, unconfirmed.stderr);
    assert.match(unconfirmed.stderr, /stdin is not a terminal: nobody can confirm; add --yes to purge/);
    const bad = await cli('topic', 'purge', 'purgeable', '--state', 'reserved', '--yes');
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /expected one of pending, dead, completed/);
    assert.equal((await t.queue.stats()).topics['purgeable']?.dead, 2, 'nothing purged');
    const purged = await cli('topic', 'purge', 'purgeable', '--state', 'dead', '--yes');
    assert.equal(purged.code, 0, purged.stderr);
    assert.equal(purged.stdout, 'purged 2 dead tasks of purgeable\n');
    const json = await cli('topic', 'purge', 'purgeable', '--state', 'pending', '--yes', '--json');
    assert.deepEqual(JSON.parse(json.stdout), { topic: 'purgeable', state: 'pending', purged: 1 });
    assert.equal((await t.queue.stats()).topics['purgeable'], undefined);
  });

  it('topic pause <topic> holds the topic, topic resume lets it go; --json answers the server\'s result', async () => {
    const paused = await cli('topic', 'pause', 'pausable');
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal(paused.stdout, 'pausable paused\n');
    assert.deepEqual(t.queue.topics.paused(), ['pausable']);
    const again = await cli('topic', 'pause', 'pausable');
    assert.equal(again.stdout, 'pausable paused (it was paused already)\n');
    const json = await cli('topic', 'resume', 'pausable', '--json');
    assert.equal(json.code, 0, json.stderr);
    assert.deepEqual(JSON.parse(json.stdout), { topic: 'pausable', paused: false, changed: true });
    assert.deepEqual(t.queue.topics.paused(), []);
    const bad = await cli('topic', 'pause', 'a b');
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /INVALID_TOPIC/);
  });

  it('topic limits <topic> sets with --rate/--period/--burst/--concurrency, prints, clears with --clear; bad input exits non-zero saying why', async () => {
    const set = await cli('topic', 'limits', 'metered', '--rate', '5', '--period', '1m', '--concurrency', '3');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'metered: 5 per 1m (burst 5), at most 3 in flight\n');
    assert.deepEqual(await t.queue.topics.getLimits('metered'), { rate: 5, periodMs: 60_000, burst: 5, concurrency: 3 });
    const shown = await cli('topic', 'limits', 'metered');
    assert.equal(shown.stdout, 'metered: 5 per 1m (burst 5), at most 3 in flight\n');
    const json = await cli('topic', 'limits', 'metered', '--json');
    assert.deepEqual(JSON.parse(json.stdout), { topic: 'metered', limits: { rate: 5, periodMs: 60_000, burst: 5, concurrency: 3 } });
    const capOnly = await cli('topic', 'limits', 'metered', '--concurrency', '2');
    assert.equal(capOnly.stdout, 'metered: at most 2 in flight\n');

    const usage: Array<[string[], RegExp]> = [
      [['--rate', '0'], /expected a positive integer/],
      [['--rate', 'many'], /expected a positive integer/],
      [['--burst', '4'], /--period and --burst need --rate/],
      [['--period', 'soon', '--rate', '1'], /is not a duration/],
      [['--clear', '--rate', '1'], /--clear takes no --rate/],
    ];
    for (const [args, message] of usage) {
      const bad = await cli('topic', 'limits', 'metered', ...args);
      assert.equal(bad.code, 2, `${args.join(' ')}: ${bad.stderr}`);
      assert.match(bad.stderr, message);
    }
    const tooMany = await cli('topic', 'limits', 'metered', '--rate', '2000000');
    assert.notEqual(tooMany.code, 0);
    assert.match(tooMany.stderr, /INVALID_OPTION/);
    assert.deepEqual(await t.queue.topics.getLimits('metered'), { rate: null, periodMs: 1000, burst: 1, concurrency: 2 }, 'unchanged by bad input');

    const cleared = await cli('topic', 'limits', 'metered', '--clear');
    assert.equal(cleared.code, 0, cleared.stderr);
    assert.equal(cleared.stdout, 'metered: limits cleared\n');
    assert.equal((await cli('topic', 'limits', 'metered', '--clear')).stdout, 'metered: had no limits\n');
    const none = await cli('topic', 'limits', 'metered');
    assert.equal(none.code, 1);
    assert.match(none.stderr, /LIMITS_NOT_FOUND/);
    assert.match(none.stderr, /metered has no flow limits/);
  });

  /** Tasks of demo topics that could still run. */
  const demoLeftovers = async (): Promise<string[]> => {
    const tasks = [...(await t.queue.list({ state: 'pending', limit: 1000 })), ...(await t.queue.list({ state: 'reserved', limit: 1000 }))];
    return tasks.filter((task) => task.topic.startsWith('demo-')).map((task) => task.id);
  };

  /** Topics of the demo the store still counts (in any state). */
  const demoTopics = async (): Promise<string[]> => Object.keys((await t.queue.stats()).topics).filter((topic) => topic.startsWith('demo-'));

  it('demo leaves no task behind when it passes: its topics leave the store\'s stats', async () => {
    // --speed 2: a keepalive every 250 ms against a 1 s timeout. At --speed 4 (125 ms against
    // 500 ms) a CLI process starved on a loaded host sent one late and a live connection
    // fired: DEMO_FAILED with unexpected ids (seen at load 10-15).
    const result = await cli('demo', '--speed', '2', '--json');
    assert.equal(result.code, 0, result.stderr + result.stdout);
    assert.match(result.stdout, /"case":"cleanup","event":"purged 12 demo tasks \(0 that had not fired\)"/, 'all 12 finished: 7 fired and acked, 5 cancelled');
    assert.deepEqual(await demoLeftovers(), []);
    assert.deepEqual(await demoTopics(), []);
    for (const state of ['completed', 'cancelled', 'dead'] as const) assert.deepEqual((await t.queue.list({ state, limit: 1000 })).filter((task) => task.topic.startsWith('demo-')), [], state);
    assert.equal((await t.queue.schedules.list()).length, 0);
  });

  it('demo interrupted (SIGINT) cancels its tasks that had not fired, and exits 1', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', '--server', url, 'demo', '--speed', '1', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Interrupted once every case has scheduled its tasks, before any is due.
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (c: Buffer) => {
        stdout += c.toString();
        if (/connections c1\.\.c4 open/.test(stdout) && /orders o1\.\.o5 placed/.test(stdout) && /orders r1\.\.r3 delivered/.test(stdout)) resolve();
      });
    });
    assert.ok((await demoLeftovers()).length > 0, 'the demo had pending tasks when interrupted');
    child.kill('SIGINT');
    assert.equal(await exited, 1);
    assert.match(stderr, /DEMO_FAILED: demo: interrupted; its tasks were purged, none will fire/);
    assert.match(stdout, /purged \d+ demo tasks \(12 that had not fired\)/);
    assert.deepEqual(await demoLeftovers(), []);
    assert.deepEqual(await demoTopics(), [], 'its topics leave the stats, interrupted too');
  });
});
