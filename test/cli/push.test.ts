// `delayq push set|get|ls|rm`, each run as a real process against a listening app whose
// queue pushes through a scripted transport (nothing is sent anywhere).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { systemClock } from '../../src/engine/timers/wall-clock.js';
import { ScriptedTransport, newSecret, testSigner } from '../helpers/push.js';
import { runCliProcess, type CliResult } from '../helpers/service-process.js';
import { openTestApp, type TestApp } from '../helpers/service.js';

describe('delayq push', () => {
  let t: TestApp;
  let url: string;
  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(['--server', url, ...args]);

  before(async () => {
    t = await openTestApp({ push: { transport: new ScriptedTransport(systemClock), signer: testSigner } });
    url = await t.app.listen({ host: '127.0.0.1', port: 0 });
  });
  after(() => t.close());

  it('set, get, ls, rm', async () => {
    const secret = newSecret();
    const set = await cli('push', 'set', 'orders', 'https://hooks.example.com/orders', '--secret', secret, '--timeout', '5s', '--concurrency', '3', '--header', 'X-Env=prod', '--json');
    assert.equal(set.code, 0, set.stderr);
    const created = JSON.parse(set.stdout) as { secret: string; subscription: { timeoutMs: number; concurrency: number; headers: Record<string, string> } };
    assert.equal(created.secret, secret);
    assert.deepEqual([created.subscription.timeoutMs, created.subscription.concurrency, created.subscription.headers], [5_000, 3, { 'x-env': 'prod' }]);
    const generated = await cli('push', 'set', 'mail', 'https://hooks.example.com/mail');
    assert.match(generated.stdout, /^secret\s+whsec_\S+$/m);
    const [get, ls] = await Promise.all([cli('push', 'get', 'orders'), cli('push', 'ls')]);
    assert.match(get.stdout, /^url\s+https:\/\/hooks\.example\.com\/orders$/m);
    assert.ok(get.stdout.includes(`${secret.slice(0, 10)}…`), get.stdout);
    assert.ok(!get.stdout.includes(secret));
    assert.match(ls.stdout, /^TOPIC\s+URL\s+CONCURRENCY\s+TIMEOUT\nmail\s+\S+\s+16\s+10000 ms\norders\s+\S+\s+3\s+5000 ms\n$/);
    const rm = await cli('push', 'rm', 'orders');
    assert.equal(rm.code, 0, rm.stderr);
    const [again, missing, bad] = await Promise.all([cli('push', 'rm', 'orders'), cli('push', 'get', 'orders'), cli('push', 'set', 'x', 'ftp://nope')]);
    assert.equal(again.code, 1);
    assert.match(again.stderr, /PUSH_NOT_FOUND/);
    assert.equal(missing.code, 1);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /INVALID_URL/);
  });

  it('add --url schedules a task pushed to its own url; get shows it', async () => {
    const set = await cli('push', 'set', 'hooks', 'https://hooks.example.com/topic');
    assert.equal(set.code, 0, set.stderr);
    const add = await cli('add', 'hooks', '--url', 'https://hooks.example.com/own?a=1', '--delay', '1h', '--id', 'own1', '--json');
    assert.equal(add.code, 0, add.stderr);
    const get = await cli('get', 'own1');
    assert.match(get.stdout, /^url\s+https:\/\/hooks\.example\.com\/own\?a=1$/m);
    const refused = await cli('add', 'nosub', '--url', 'https://hooks.example.com/own');
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /PUSH_NO_SECRET/);
  });

  it('stats shows the push counters by topic and by origin, with the breaker', async () => {
    assert.equal((await cli('push', 'set', 'st', 'https://stats.example.com/in')).code, 0);
    assert.equal((await cli('add', 'st', '--payload', '1')).code, 0);
    // The push runs on real time in the app's process: wait for its ack.
    for (let i = 0; i < 100 && (await t.queue.stats()).push?.topics['st']?.ok !== 1; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    const stats = await cli('stats');
    assert.equal(stats.code, 0, stats.stderr);
    assert.match(stats.stdout, /^PUSH TOPIC\s+SENT\s+OK\s+FAILED\s+DEFERRED\s+NO SLOT$/m);
    assert.match(stats.stdout, /^st\s+1\s+1\s+0\s+0\s+0$/m);
    assert.match(stats.stdout, /^https:\/\/stats\.example\.com\s+closed\s+1\s+1\s+0\s+0\s+0$/m);
  });
});
