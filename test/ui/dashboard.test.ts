/* eslint-disable @typescript-eslint/no-explicit-any, @typescript-eslint/no-unsafe-member-access, @typescript-eslint/no-unsafe-assignment, @typescript-eslint/no-unsafe-call --
   HTTP response bodies are untyped JSON here; each field is checked by an assertion. */
/**
 * The dashboard in a real browser (Debian's Chromium through playwright-core) against a
 * real server on an ephemeral port, with a token. Every change made from the page is
 * checked through the API. Screenshots of each page go to .screenshots/ (gitignored).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { parseServerConfig } from '../../src/server/config.js';
import { startServer, type RunningServer } from '../../src/server/main.js';
import { launchBrowser } from '../helpers/browser.js';

const TOKEN = 'ui-test-token';
const XSS = '<img src=x onerror=alert(1)>';
const SHOTS = '.screenshots';

interface Watched {
  readonly page: Page;
  readonly context: BrowserContext;
  /** Console errors and uncaught page errors. */
  readonly errors: string[];
  /** alert() / prompt() dialogs: none may open (confirms are accepted). */
  readonly alerts: string[];
}

describe('dashboard in Chromium', () => {
  let server: RunningServer;
  let browser: Browser;
  const opened: Watched[] = [];

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    // Push may reach 127.0.0.1 (the Topics layout test's receiver that refuses every push).
    const config = parseServerConfig({ store: 'memory', port: '0', token: TOKEN, logLevel: 'silent', pushAllow: '127.0.0.1', events: true }, {});
    server = await startServer(config, pino({ level: 'silent' }));
    browser = await launchBrowser();
  });

  after(async () => {
    for (const w of opened) await w.context.close();
    await browser?.close();
    await server?.stop();
  });

  async function api<T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
    const response = await fetch(server.address + path, {
      method,
      headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  }

  /** A new tab with the token already given (sessionStorage), console and dialogs watched. */
  async function openPage(hash: string, options: { token?: boolean; width?: number; height?: number } = {}): Promise<Watched> {
    const context = await browser.newContext({ viewport: { width: options.width ?? 1280, height: options.height ?? 860 } });
    if (options.token !== false) await context.addInitScript(`sessionStorage.setItem('delayq.token', ${JSON.stringify(TOKEN)})`);
    const page = await context.newPage();
    const watched: Watched = { page, context, errors: [], alerts: [] };
    page.on('console', (message) => {
      if (message.type() === 'error') watched.errors.push(message.text());
    });
    page.on('pageerror', (error) => watched.errors.push(`pageerror: ${error.message}`));
    page.on('dialog', (dialog) => {
      if (dialog.type() === 'confirm') void dialog.accept();
      else {
        watched.alerts.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      }
    });
    opened.push(watched);
    await page.goto(`${server.address}/ui/${hash}`);
    return watched;
  }

  function assertClean(w: Watched): void {
    assert.deepEqual(w.errors, [], 'no console errors');
    assert.deepEqual(w.alerts, [], 'no alert dialogs');
  }

  it('asks for the token once, refuses a wrong one, then shows the overview', async () => {
    const w = await openPage('#/overview', { token: false });
    const { page } = w;
    await page.getByTestId('token-form').waitFor();
    await page.screenshot({ path: `${SHOTS}/token.png` });
    await page.getByTestId('token-input').fill('not-the-token');
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByTestId('token-error').getByText('The server refused this token.').waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('delayq.token')"), null);
    await page.getByTestId('token-input').fill(TOKEN);
    await page.getByRole('button', { name: 'Use token' }).click();
    await page.getByTestId('counts').waitFor();
    assert.equal(await page.evaluate<string | null>("sessionStorage.getItem('delayq.token')"), TOKEN);
    // Kept for the tab: a reload asks nothing.
    await page.reload();
    await page.getByTestId('counts').waitFor();
    // The wrong token's 401 is the only error the console saw.
    assert.ok(w.errors.every((e) => /401/.test(e)), w.errors.join('\n'));
    assert.equal(w.errors.length, 1);
    assert.deepEqual(w.alerts, []);
  });

  it('overview shows tasks scheduled through the API; the timeline shows them in their minute', async () => {
    const w = await openPage('#/overview');
    const before = (await api('GET', '/v1/stats')).body.counts.pending as number;
    await w.page.getByTestId('count-pending').getByText(String(before), { exact: true }).waitFor();
    for (const id of ['ov-1', 'ov-2', 'ov-3']) assert.equal((await api('POST', '/v1/tasks', { id, topic: 'overview', delayMs: 600_000 })).status, 201);
    await w.page.getByTestId('count-pending').getByText(String(before + 3), { exact: true }).waitFor();
    await w.page.getByTestId('store').getByText('memory').waitFor();
    await w.page.getByTestId('version').getByText('0.1.0').waitFor();

    // Some traffic for the rate and lateness charts (and the screenshot): tasks falling due
    // over 4 s, a consumer acking them.
    await api('POST', '/v1/tasks/batch', { tasks: Array.from({ length: 400 }, (_, i) => ({ topic: 'traffic', delayMs: 500 + i * 10, payload: { i } })) });
    let consuming = true;
    const consumer = (async () => {
      while (consuming) {
        const { body } = await api('POST', '/v1/topics/traffic/reserve', { max: 50, waitMs: 200 });
        if (body.tasks.length > 0) await api('POST', '/v1/tasks/ack', { acks: body.tasks.map((t: { id: string; receipt: string }) => ({ id: t.id, receipt: t.receipt })) });
      }
    })();
    await w.page.waitForTimeout(6_500);
    await w.page.screenshot({ path: `${SHOTS}/overview.png`, fullPage: true });
    consuming = false;
    await consumer;

    const { body: task } = await api('GET', '/v1/tasks/ov-1');
    const minute = Math.floor(task.runAt / 60_000) * 60_000;
    const sameMinute = (await Promise.all(['ov-1', 'ov-2', 'ov-3'].map((id) => api('GET', `/v1/tasks/${id}`)))).filter((a) => Math.floor(a.body.runAt / 60_000) * 60_000 === minute).length;
    await w.page.getByTestId('nav-timeline').click();
    const row = w.page.getByTestId('minutes-table').locator(`tr[data-at="${minute}"]`);
    await row.waitFor();
    assert.equal((await row.locator('td').nth(1).textContent())?.trim(), String(sameMinute));
    await w.page.screenshot({ path: `${SHOTS}/timeline.png`, fullPage: true });
    assertClean(w);
  });

  it('cancel, run now, reschedule and retry of a dead task from the page; the API confirms each', async () => {
    await api('POST', '/v1/tasks', { id: 'act-cancel', topic: 'acts', delayMs: 3_600_000 });
    await api('POST', '/v1/tasks', { id: 'act-move', topic: 'moves', delayMs: 3_600_000, priority: 12 });
    await api('POST', '/v1/tasks', { id: 'act-run', topic: 'acts', delayMs: 3_600_000 });
    await api('POST', '/v1/tasks', { id: 'act-dead', topic: 'dying', maxAttempts: 1, payload: { n: 1 } });
    const [delivery] = (await api('POST', '/v1/topics/dying/reserve', { waitMs: 5_000 })).body.tasks;
    assert.equal(delivery.id, 'act-dead');
    assert.deepEqual((await api('POST', '/v1/tasks/act-dead/nack', { receipt: delivery.receipt, error: 'handler failed' })).body, { state: 'dead' });

    const w = await openPage('#/tasks/act-cancel');
    const { page } = w;
    await page.getByTestId('task-state').getByText('pending').waitFor();
    await page.getByTestId('cancel').click();
    await page.getByTestId('notice').getByText('Cancelled.').waitFor();
    assert.equal((await api('GET', '/v1/tasks/act-cancel')).body.state, 'cancelled');

    await page.goto(`${server.address}/ui/#/tasks/act-run`);
    await page.getByTestId('run-now').click();
    await page.getByTestId('notice').getByText('Due now.').waitFor();
    const moved = (await api('GET', '/v1/tasks/act-run')).body;
    assert.ok(moved.runAt <= Date.now(), 'due now');
    const reserved = (await api('POST', '/v1/topics/acts/reserve', { waitMs: 5_000 })).body.tasks;
    assert.deepEqual(reserved.map((t: { id: string }) => t.id), ['act-run']);

    // Reschedule: a local date and time typed in the page's picker.
    const target = Math.floor((Date.now() + 2 * 3_600_000) / 1000) * 1000;
    const local = await page.evaluate<string>(
      `(() => { const d = new Date(${target}); const p = (n) => String(n).padStart(2, '0'); return d.getFullYear() + '-' + p(d.getMonth() + 1) + '-' + p(d.getDate()) + 'T' + p(d.getHours()) + ':' + p(d.getMinutes()) + ':' + p(d.getSeconds()); })()`,
    );
    await page.goto(`${server.address}/ui/#/tasks/act-move`);
    assert.equal((await page.getByTestId('task-priority').textContent())?.trim(), '12');
    await page.getByTestId('reschedule-at').fill(local);
    await page.getByTestId('reschedule').click();
    await page.getByTestId('notice').getByText('Rescheduled to', { exact: false }).waitFor();
    assert.equal((await api('GET', '/v1/tasks/act-move')).body.runAt, target);

    await page.goto(`${server.address}/ui/#/tasks/act-dead`);
    await page.getByTestId('task-last-error').getByText('handler failed').waitFor();
    await page.screenshot({ path: `${SHOTS}/task-dead.png`, fullPage: true });
    await page.getByTestId('retry').click();
    await page.getByTestId('notice').getByText('Retried: pending again.').waitFor();
    const retried = (await api('GET', '/v1/tasks/act-dead')).body;
    assert.ok(retried.state === 'pending' || retried.state === 'reserved');
    assert.equal(retried.attempts === 0 || retried.state === 'reserved', true);
    assertClean(w);
  });

  it('task detail follows the task live through its lifecycle events: reserved, then completed, without a reload', async () => {
    await api('POST', '/v1/tasks', { id: 'live-1', topic: 'lively', delayMs: 3_600_000 });
    const w = await openPage('#/tasks/live-1');
    const { page } = w;
    await page.getByTestId('task-state').getByText('pending').waitFor();
    await page.getByTestId('live').waitFor();
    assert.equal((await api('PATCH', '/v1/tasks/live-1', { delayMs: 0 })).status, 200);
    const [delivery] = (await api('POST', '/v1/topics/lively/reserve', { waitMs: 5_000 })).body.tasks;
    assert.equal(delivery.id, 'live-1');
    await page.getByTestId('task-state').getByText('reserved').waitFor();
    await api('POST', '/v1/tasks/live-1/ack', { receipt: delivery.receipt });
    await page.getByTestId('task-state').getByText('completed').waitFor();
    assertClean(w);
  });

  it('bulk cancel of the dead tasks of a topic, from the tasks list', async () => {
    for (const id of ['gone-1', 'gone-2']) await api('POST', '/v1/tasks', { id, topic: 'gone', maxAttempts: 1 });
    const deliveries = (await api('POST', '/v1/topics/gone/reserve', { max: 2, waitMs: 5_000 })).body.tasks;
    for (const d of deliveries) await api('POST', `/v1/tasks/${d.id}/nack`, { receipt: d.receipt, error: 'x' });
    const w = await openPage('#/tasks?topic=gone&state=dead');
    await w.page.getByTestId('tasks-table').locator('tr[data-id="gone-2"]').waitFor();
    await w.page.getByTestId('cancel-all-dead').click();
    await w.page.getByTestId('notice').getByText(`${deliveries.length} dead tasks of gone cancelled.`).waitFor();
    assert.equal((await api('GET', '/v1/tasks/gone-1')).body.state, 'cancelled');
    assert.equal((await api('GET', '/v1/tasks?topic=gone&state=dead')).body.tasks.length, 0);
    assertClean(w);
  });

  it('bulk retry of the dead tasks of a topic, from the tasks list', async () => {
    for (const id of ['bulk-1', 'bulk-2']) await api('POST', '/v1/tasks', { id, topic: 'bulk', maxAttempts: 1 });
    const deliveries = (await api('POST', '/v1/topics/bulk/reserve', { max: 2, waitMs: 5_000 })).body.tasks;
    assert.equal(deliveries.length, 2);
    for (const d of deliveries) await api('POST', `/v1/tasks/${d.id}/nack`, { receipt: d.receipt, error: 'x' });
    const w = await openPage('#/tasks?topic=bulk&state=dead');
    await w.page.getByTestId('tasks-table').locator('tr[data-id="bulk-2"]').waitFor();
    await w.page.screenshot({ path: `${SHOTS}/tasks.png`, fullPage: true });
    await w.page.getByTestId('retry-all-dead').click();
    await w.page.getByTestId('notice').getByText('2 dead tasks of bulk retried.').waitFor();
    assert.equal((await api('GET', '/v1/tasks?topic=bulk&state=dead')).body.tasks.length, 0);
    assertClean(w);
  });

  it('purges a topic\'s tasks in one state from the Topics page, once confirmed; a dismissed confirm purges nothing', async () => {
    await api('POST', '/v1/tasks/batch', { tasks: ['pg-1', 'pg-2', 'pg-3'].map((id) => ({ id, topic: 'purgeme', delayMs: 600_000 })) });
    await api('POST', '/v1/tasks', { id: 'pg-keep', topic: 'purgekeep', delayMs: 600_000 });
    const w = await openPage('#/topics');
    const { page } = w;
    // Dialogs answered here: the first purge confirm is dismissed, the next accepted.
    const confirms: string[] = [];
    let dismiss = true;
    page.removeAllListeners('dialog');
    page.on('dialog', (dialog) => {
      if (dialog.type() !== 'confirm') {
        w.alerts.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
        return;
      }
      confirms.push(dialog.message());
      void (dismiss ? dialog.dismiss() : dialog.accept());
      dismiss = false;
    });
    const row = page.getByTestId('topics-table').locator('tr[data-topic="purgeme"]');
    await row.waitFor();
    await row.getByTestId('purge-state').selectOption('pending');
    await row.getByTestId('purge').click();
    await page.waitForTimeout(300);
    assert.deepEqual(confirms, ['Delete every pending task of topic purgeme? This cannot be undone.']);
    assert.equal((await api('GET', '/v1/tasks?topic=purgeme&state=pending')).body.tasks.length, 3, 'dismissed: nothing purged');
    await row.getByTestId('purge').click();
    await page.getByTestId('notice').getByText('Purged 3 pending tasks of purgeme.').waitFor();
    assert.equal(confirms.length, 2);
    assert.equal((await api('GET', '/v1/tasks?topic=purgeme')).body.tasks.length, 0);
    assert.equal((await api('GET', '/v1/tasks/pg-keep')).body.state, 'pending', 'another topic is untouched');
    // The page reloads at once: the topic has no task left, so it leaves the table.
    await row.waitFor({ state: 'detached' });
    await page.screenshot({ path: `${SHOTS}/topics-purge.png`, fullPage: true });
    assertClean(w);
  });

  it('task detail: the attempt history as a table, oldest first, each with its outcome and error', async () => {
    await api('POST', '/v1/tasks', { id: 'hist', topic: 'hist', maxAttempts: 3 });
    const [first] = (await api('POST', '/v1/topics/hist/reserve', { waitMs: 5_000 })).body.tasks;
    await api('POST', '/v1/tasks/hist/nack', { receipt: first.receipt, error: 'first failure', delayMs: 0 });
    const [second] = (await api('POST', '/v1/topics/hist/reserve', { waitMs: 5_000 })).body.tasks;
    assert.equal((await api('POST', '/v1/tasks/hist/ack', { receipt: second.receipt })).status, 200);
    const history = (await api('GET', '/v1/tasks/hist')).body.history as { attempt: number; outcome: string }[];
    assert.deepEqual(history.map((a) => [a.attempt, a.outcome]), [[1, 'nacked'], [2, 'acked']]);

    const w = await openPage('#/tasks/hist');
    const { page } = w;
    await page.getByTestId('history').waitFor();
    const rows = page.getByTestId('history-row');
    assert.equal(await rows.count(), 2);
    assert.deepEqual(await page.getByTestId('history-outcome').allTextContents(), ['nacked', 'acked']);
    assert.match((await rows.nth(0).textContent()) ?? '', /^1.*\d+ ms.*nacked.*first failure$/);
    assert.match((await rows.nth(1).textContent()) ?? '', /^2.*acked—$/);
    await page.screenshot({ path: `${SHOTS}/task-history.png`, fullPage: true });

    await api('POST', '/v1/tasks', { id: 'no-hist', topic: 'hist', delayMs: 3_600_000 });
    await page.goto(`${server.address}/ui/#/tasks/no-hist`);
    await page.getByTestId('history-empty').waitFor();
    assertClean(w);
  });

  it('pauses and resumes a topic from the Topics page: its state is shown, a due task is held, then delivered', async () => {
    await api('POST', '/v1/tasks', { id: 'ps-1', topic: 'pauseme', delayMs: 600_000 });
    const w = await openPage('#/topics');
    const { page } = w;
    const row = page.getByTestId('topics-table').locator('tr[data-topic="pauseme"]');
    await row.waitFor();
    assert.equal(await row.getByTestId('pause-state').textContent(), 'delivering');
    await row.getByTestId('pause-toggle').click();
    await page.getByTestId('notice').getByText('Paused pauseme: nothing of it is delivered until it is resumed.').waitFor();
    await row.getByTestId('pause-state').getByText('paused').waitFor();
    assert.deepEqual((await api('GET', '/v1/stats')).body.paused, ['pauseme']);
    // Due now, while paused: not reserved.
    await api('POST', '/v1/tasks', { id: 'ps-2', topic: 'pauseme' });
    assert.deepEqual((await api('POST', '/v1/topics/pauseme/reserve', { waitMs: 0 })).body.tasks, []);
    await page.screenshot({ path: `${SHOTS}/topics-paused.png`, fullPage: true });
    assert.equal(await row.getByTestId('pause-toggle').textContent(), 'Resume');
    await row.getByTestId('pause-toggle').click();
    await page.getByTestId('notice').getByText('Resumed pauseme: what fell due is delivered, in runAt order.').waitFor();
    await row.getByTestId('pause-state').getByText('delivering').waitFor();
    assert.deepEqual((await api('POST', '/v1/topics/pauseme/reserve', { waitMs: 2_000 })).body.tasks.map((t: { id: string }) => t.id), ['ps-2']);
    assertClean(w);
  });

  it("sets, shows and clears a topic's flow limits from the Topics page, with its throttled count", async () => {
    await api('POST', '/v1/tasks', { id: 'fl-1', topic: 'flowme', delayMs: 600_000 });
    const w = await openPage('#/topics');
    const { page } = w;
    const row = page.getByTestId('topics-table').locator('tr[data-topic="flowme"]');
    await row.waitFor();
    assert.equal(await row.getByTestId('limits').textContent(), 'none');
    assert.equal(await row.getByTestId('throttled').textContent(), '0');
    await row.getByTestId('limits-edit').click();
    await row.getByTestId('limits-rate').fill('1');
    await row.getByTestId('limits-periodMs').fill('60000');
    await row.getByTestId('limits-concurrency').fill('3');
    await row.getByTestId('limits-set').click();
    await page.getByTestId('notice').getByText('Limits of flowme set: every server sharing the store holds them within 1 s.').waitFor();
    await row.getByTestId('limits').getByText('1 / 1m 0s, burst 1; ≤ 3 in flight').waitFor();
    assert.deepEqual((await api('GET', '/v1/topics/flowme/limits')).body.limits, { rate: 1, periodMs: 60_000, burst: 1, concurrency: 3 });

    // Two due tasks, a bucket of one a minute: one is reserved, the other waits and is counted.
    await api('POST', '/v1/tasks', { id: 'fl-2', topic: 'flowme' });
    await api('POST', '/v1/tasks', { id: 'fl-3', topic: 'flowme' });
    assert.equal((await api('POST', '/v1/topics/flowme/reserve', { max: 2, waitMs: 2_000 })).body.tasks.length, 1);
    assert.deepEqual((await api('POST', '/v1/topics/flowme/reserve', { waitMs: 0 })).body.tasks, []);
    const throttled = (await api('GET', '/v1/stats')).body.throttled.flowme as number;
    assert.ok(throttled >= 1, `throttled ${throttled}`);
    await row.getByTestId('throttled').getByText(String(throttled)).waitFor({ timeout: 10_000 });
    await page.screenshot({ path: `${SHOTS}/topics-limits.png`, fullPage: true });

    await row.getByTestId('limits-edit').click();
    assert.equal(await row.getByTestId('limits-rate').inputValue(), '1', 'the form starts from the limits in force');
    await row.getByTestId('limits-clear').click();
    await page.getByTestId('notice').getByText('Limits of flowme cleared: it is delivered unlimited again.').waitFor();
    await row.getByTestId('limits').getByText('none').waitFor();
    assert.equal((await api('GET', '/v1/topics/flowme/limits')).status, 404);
    assertClean(w);
  });

  it('a flow limit the server refuses is shown as its message, and nothing is set', async () => {
    await api('POST', '/v1/tasks', { id: 'fl-bad', topic: 'flowbad', delayMs: 600_000 });
    const w = await openPage('#/topics');
    const { page } = w;
    const row = page.getByTestId('topics-table').locator('tr[data-topic="flowbad"]');
    await row.waitFor();
    await row.getByTestId('limits-edit').click();
    await row.getByTestId('limits-burst').fill('5');
    await row.getByTestId('limits-set').click();
    await page.getByTestId('notice').getByText(/rate/).waitFor();
    // A negative rate hears the rule, not "must be integer" (issue 49).
    await row.getByTestId('limits-burst').fill('');
    await row.getByTestId('limits-rate').fill('-3');
    await row.getByTestId('limits-set').click();
    await page.getByTestId('notice').getByText('rate: must be a whole number from 1 to 1000000 (got -3)', { exact: true }).waitFor();
    await row.getByTestId('limits-rate').fill('2.5');
    await row.getByTestId('limits-set').click();
    await page.getByTestId('notice').getByText('rate: must be a whole number from 1 to 1000000 (got 2.5)', { exact: true }).waitFor();
    assert.equal((await api('GET', '/v1/topics/flowbad/limits')).status, 404);
    // The refused request is the one error the console saw (the browser logs a 400).
    assert.ok(w.errors.every((e) => /400/.test(e)), w.errors.join('\n'));
    assert.deepEqual(w.alerts, []);
  });

  it(`renders ${XSS} in a payload, an error and an id as text, and runs nothing`, async () => {
    await api('POST', '/v1/tasks', { id: 'xss', topic: 'xss', payload: { html: XSS, list: [XSS] }, maxAttempts: 1 });
    const [d] = (await api('POST', '/v1/topics/xss/reserve', { waitMs: 5_000 })).body.tasks;
    await api('POST', '/v1/tasks/xss/nack', { receipt: d.receipt, error: XSS });
    const w = await openPage('#/tasks/xss');
    const { page } = w;
    await page.getByTestId('payload').waitFor();
    assert.match((await page.getByTestId('payload').textContent()) ?? '', /"html": "<img src=x onerror=alert\(1\)>"/);
    assert.equal((await page.getByTestId('task-last-error').textContent())?.trim(), XSS);
    assert.match((await page.getByTestId('history-row').textContent()) ?? '', /<img src=x onerror=alert\(1\)>$/, 'the history\'s error too');
    // As an id: typed in the finder, and in the address.
    await page.goto(`${server.address}/ui/#/tasks`);
    await page.getByTestId('find-id').fill(XSS);
    await page.getByTestId('find-form').getByRole('button', { name: 'Open' }).click();
    await page.getByTestId('notice').getByText(XSS, { exact: false }).waitFor();
    await page.goto(`${server.address}/ui/#/tasks/${encodeURIComponent(XSS)}`);
    await page.getByTestId('error').getByText(`Not a task id: ${XSS}`).waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.locator('img').count(), 0, 'no img element was made');
    assertClean(w);
  });

  it('topics and push pages, and a phone-sized overview', async () => {
    const w = await openPage('#/topics');
    await w.page.getByTestId('topics-table').locator('tr[data-topic="overview"]').waitFor();
    await w.page.waitForTimeout(2_500);
    await w.page.screenshot({ path: `${SHOTS}/topics.png`, fullPage: true });
    await w.page.getByTestId('nav-push').click();
    await w.page.getByTestId('push-table').getByText('no push subscriptions').waitFor();
    await w.page.screenshot({ path: `${SHOTS}/push.png`, fullPage: true });
    assertClean(w);

    const phone = await openPage('#/overview', { width: 390, height: 844 });
    await phone.page.getByTestId('count-pending').waitFor();
    const overflow = await phone.page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');
    assert.ok(overflow <= 0, `no sideways scrolling on a phone (${overflow}px)`);
    await phone.page.screenshot({ path: `${SHOTS}/overview-phone.png`, fullPage: true });
    assertClean(phone);
  });

  it('topics: pages of 100 by name, with Next and Previous; the topic pickers still list every topic', async () => {
    const names = Array.from({ length: 110 }, (_, i) => `zz-pg-${String(i).padStart(3, '0')}`);
    assert.equal((await api('POST', '/v1/tasks/batch', { tasks: names.map((topic) => ({ topic, delayMs: 3_600_000 })) })).status, 200);
    const w = await openPage('#/topics');
    const table = w.page.getByTestId('topics-table');
    const rows = table.locator('tbody tr[data-topic]');
    await rows.nth(99).waitFor();
    assert.equal(await rows.count(), 100);
    assert.equal(await table.locator('tr[data-topic="zz-pg-109"]').count(), 0);
    await w.page.getByTestId('topics-next-page').click();
    await table.locator('tr[data-topic="zz-pg-109"]').waitFor();
    assert.equal(await w.page.getByTestId('topics-next-page').isDisabled(), true);
    await w.page.getByTestId('topics-prev-page').click();
    await w.page.getByTestId('topics-prev-page').and(w.page.locator('[disabled]')).waitFor();
    await w.page.getByTestId('nav-tasks').click();
    await w.page.getByTestId('list-topic').locator('option', { hasText: 'zz-pg-109' }).waitFor({ state: 'attached' });
    assertClean(w);
  });

  it('schedules: listed with their next time; pause, resume and delete from the page, each confirmed by the API', async () => {
    const put = await api('PUT', '/v1/schedules/nightly', { topic: 'backup', cron: '30 2 * * *', tz: 'Europe/Berlin', payload: { full: true, note: XSS }, misfire: 'skip' });
    assert.equal(put.status, 201);
    assert.equal((await api('PUT', '/v1/schedules/hourly', { topic: 'ping', everyMs: 3_600_000, limit: 5 })).status, 201);
    const [nightlyNext] = (await api('GET', '/v1/schedules/nightly/next?n=1')).body.times as number[];

    const w = await openPage('#/overview');
    const { page } = w;
    await page.getByTestId('nav-schedules').click();
    const row = page.getByTestId('schedules-table').locator('tr[data-id="nightly"]');
    await row.waitFor();
    assert.equal(await row.getByTestId('schedule-next').getAttribute('data-at'), String(nightlyNext));
    assert.match((await row.getByTestId('schedule-next').textContent()) ?? '', new RegExp(new Date(nightlyNext!).toISOString().replace('.000Z', 'Z').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')));
    assert.equal((await row.getByTestId('schedule-rule').textContent())?.trim(), '30 2 * * * (Europe/Berlin)');
    const hourly = page.getByTestId('schedules-table').locator('tr[data-id="hourly"]');
    assert.equal((await hourly.getByTestId('schedule-rule').textContent())?.trim(), 'every 1h');
    // An occurrence is created within scheduleLeadMs (1.5 s) of its time: none yet, 0 of 5.
    assert.equal((await api('GET', '/v1/schedules/hourly')).body.schedule.count, 0);
    assert.equal((await hourly.getByTestId('schedule-count').textContent())?.trim(), '0 / 5');
    await page.screenshot({ path: `${SHOTS}/schedules.png`, fullPage: true });

    // The detail: the next 10 times, as the API gives them; the payload as text.
    await row.getByRole('link', { name: 'nightly' }).click();
    await page.getByTestId('next-times').locator('tbody tr[data-at]').nth(9).waitFor();
    const times = (await api('GET', '/v1/schedules/nightly/next?n=10')).body.times as number[];
    const shown = await page.getByTestId('next-times').locator('tbody tr[data-at]').evaluateAll((rows) => rows.map((r) => Number(r.getAttribute('data-at'))));
    assert.deepEqual(shown, times);
    assert.match((await page.getByTestId('payload').textContent()) ?? '', /"note": "<img src=x onerror=alert\(1\)>"/);
    await page.screenshot({ path: `${SHOTS}/schedule.png`, fullPage: true });

    await page.getByTestId('pause').click();
    await page.getByTestId('notice').getByText('Paused.').waitFor();
    assert.equal((await api('GET', '/v1/schedules/nightly')).body.schedule.paused, true);
    await page.getByTestId('resume').click();
    await page.getByTestId('notice').getByText('Resumed.').waitFor();
    assert.equal((await api('GET', '/v1/schedules/nightly')).body.schedule.paused, false);
    await page.getByTestId('pause').waitFor();
    await page.getByTestId('delete').click();
    await page.getByTestId('notice').getByText('Schedule nightly deleted.').waitFor();
    assert.equal((await api('GET', '/v1/schedules/nightly')).status, 404);
    assert.equal(await page.getByTestId('schedule-facts').count(), 0);

    // An XSS-looking schedule id in the address is refused as text.
    await page.goto(`${server.address}/ui/#/schedules/${encodeURIComponent(XSS)}`);
    await page.getByTestId('error').getByText(`Not a schedule id: ${XSS}`).waitFor();
    await page.waitForTimeout(300);
    assert.equal(await page.locator('img').count(), 0, 'no img element was made');
    assert.equal((await api('DELETE', '/v1/schedules/hourly')).status, 200);
    assertClean(w);
  });

  it('schedules: pages of 100 by id, with Next and Previous', async () => {
    const ids = Array.from({ length: 150 }, (_, i) => `pg${String(i).padStart(3, '0')}`);
    const startAt = Date.now() + 86_400_000;
    assert.equal((await api('PUT', '/v1/schedules', ids.map((id) => ({ id, topic: 'pages', everyMs: 86_400_000, startAt })))).status, 200);
    const w = await openPage('#/schedules');
    const table = w.page.getByTestId('schedules-table');
    const rows = table.locator('tbody tr[data-id]');
    await table.locator('tr[data-id="pg099"]').waitFor();
    assert.equal(await rows.count(), 100);
    assert.equal(await w.page.getByTestId('schedules-prev-page').isDisabled(), true);
    await w.page.getByTestId('schedules-next-page').click();
    await table.locator('tr[data-id="pg149"]').waitFor();
    assert.equal(await rows.count(), 50);
    assert.equal(await w.page.getByTestId('schedules-next-page').isDisabled(), true);
    await w.page.getByTestId('schedules-prev-page').click();
    await table.locator('tr[data-id="pg000"]').waitFor();
    for (const id of ids) await api('DELETE', `/v1/schedules/${id}`);
    assertClean(w);
  });

  interface Box {
    readonly name: string;
    readonly left: number;
    readonly right: number;
  }
  interface Layout {
    readonly viewport: number;
    readonly page: number;
    readonly scroll: { readonly client: number; readonly content: number };
    readonly headers: readonly Box[];
    readonly cells: readonly Box[];
  }
  /** Run in the page (as text: tsx would wrap a function in helpers the page has not got): where the Topics table's headers and each row's controls are. */
  const MEASURE_TOPICS_TABLE = `(() => {
    const box = (name, e) => { const r = e.getBoundingClientRect(); return { name, left: r.left, right: r.right }; };
    const table = document.querySelector('[data-testid=topics-table]');
    const controls = ['td.topic a', '[data-testid=limits]', '[data-testid=limits-edit]', '[data-testid=limits-form] button', '[data-testid=limits-form] input',
      '[data-testid=purge-state]', '[data-testid=purge]', '[data-testid=pause-toggle]', '[data-testid=push-url]', '[data-testid=push-failure]'];
    return {
      viewport: document.documentElement.clientWidth,
      page: document.documentElement.scrollWidth,
      scroll: { client: table.parentElement.clientWidth, content: table.parentElement.scrollWidth },
      headers: [...table.querySelectorAll('thead th')].map((th) => box(th.textContent, th)),
      cells: [...table.querySelectorAll('tbody tr[data-topic]')].flatMap((row) => controls.flatMap((selector) => [...row.querySelectorAll(selector)])
        .map((e) => box(row.getAttribute('data-topic').slice(0, 30) + ' ' + (e.getAttribute('data-testid') ?? e.tagName), e))),
    };
  })()`;

  // Issue 49: at 1,400 and 1,920 px the table ran past the window (the topic, flow limits
  // and purge columns cut off, behind a sideways scroll). Rows made as wide as they get: a
  // 200-character topic, a long push URL with its last failure, large limits, the limits
  // form open; every header and every control of each row must lie within the window.
  it('the Topics table fits a 1,400 and a 1,920 px window: every column visible, nothing scrolled sideways', async () => {
    const long = `aaa.${'very-long-topic-name.'.repeat(9)}end`.slice(0, 200);
    const wide = ['aaa-push.receiver', 'aaa-limited.mail.send.transactional.high-priority.eu-west-1', long];
    for (const topic of wide) assert.equal((await api('POST', '/v1/tasks', { topic, delayMs: 600_000 })).status, 201);
    assert.equal((await api('PUT', '/v1/topics/aaa-limited.mail.send.transactional.high-priority.eu-west-1/limits', { rate: 1_000_000, periodMs: 86_400_000, burst: 1_000_000, concurrency: 100_000 })).status, 200);
    assert.equal((await api('PUT', `/v1/topics/${long}/limits`, { concurrency: 100_000 })).status, 200);
    // Port 9 refuses: the push fails, and its error is shown under the URL.
    assert.equal((await api('PUT', '/v1/topics/aaa-push.receiver/push', { url: 'http://127.0.0.1:9/delayq/receivers/push/a/rather/long/path/of/segments?with=a&query=string' })).status, 201);
    assert.equal((await api('POST', '/v1/tasks', { topic: 'aaa-push.receiver' })).status, 201);
    try {
      for (const width of [1_400, 1_920]) {
        const w = await openPage('#/topics', { width, height: 900 });
        const { page } = w;
        const table = page.getByTestId('topics-table');
        await table.locator('tr[data-topic="aaa-push.receiver"]').getByTestId('push-failure').waitFor({ timeout: 10_000 });
        await table.locator('tr[data-topic="aaa-limited.mail.send.transactional.high-priority.eu-west-1"]').getByTestId('limits-edit').click();
        await table.getByTestId('limits-form').waitFor();
        await page.screenshot({ path: `${SHOTS}/topics-${width}.png`, fullPage: true });
        const layout = await page.evaluate<Layout>(MEASURE_TOPICS_TABLE);
        assert.deepEqual(
          layout.headers.map((h) => h.name),
          ['topic', 'pending', 'reserved', 'completed', 'dead', 'cancelled', 'ready', 'oldest ready', 'delivered/s', 'acked/s', 'failed/s', 'push (last failure)', 'delivery', 'flow limits (throttled)', 'purge'],
        );
        assert.ok(layout.cells.length >= 20, `the controls were measured (${layout.cells.length})`);
        for (const item of [...layout.headers, ...layout.cells])
          assert.ok(item.left >= 0 && item.right <= layout.viewport, `${width} px: ${item.name} within the window (${Math.round(item.left)}..${Math.round(item.right)} of ${layout.viewport})`);
        assert.ok(layout.scroll.content <= layout.scroll.client, `${width} px: the table needs no sideways scroll (${layout.scroll.content} > ${layout.scroll.client})`);
        assert.ok(layout.page <= layout.viewport, `${width} px: the page needs no sideways scroll (${layout.page} > ${layout.viewport})`);
        // Visible to the browser too: the last column's controls of the 200-character topic's row.
        const longRow = table.locator(`tr[data-topic="${long}"]`);
        for (const id of ['purge', 'limits-edit']) assert.equal(await longRow.getByTestId(id).isVisible(), true, id);
        assert.deepEqual(w.alerts, []);
        assert.ok(w.errors.every((e) => /ERR_CONNECTION|net::/.test(e)), w.errors.join('\n'));
      }
    } finally {
      await api('DELETE', '/v1/topics/aaa-push.receiver/push');
    }
  });

  it('topics and ids named like Object.prototype members show their own figures, none of the prototype', async () => {
    const names = ['__proto__', 'constructor', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__'];
    for (const name of names) assert.equal((await api('POST', '/v1/tasks', { id: name, topic: name, delayMs: 600_000 })).status, 201);
    assert.equal((await api('PUT', '/v1/topics/__proto__/limits', { rate: 5 })).status, 200);
    const w = await openPage('#/topics');
    const table = w.page.getByTestId('topics-table');
    for (const name of names) {
      const row = table.locator(`tr[data-topic="${name}"]`);
      await row.waitFor();
      const cells = await row.locator('td').allTextContents();
      // topic, pending, reserved, completed, dead, cancelled, ready, oldest ready, 3 rates, push (last failure), ...
      assert.deepEqual(cells.slice(0, 8), [name, '1', '0', '0', '0', '0', '0', ''], `row of ${name}`);
      assert.equal(cells[11], '', `push and last push failure of ${name}`);
      assert.equal(await row.getByTestId('push-failure').count(), 0, `last push failure of ${name}`);
      assert.equal(await row.getByTestId('throttled').textContent(), '0', `throttled of ${name}`);
      assert.equal(await row.getByTestId('limits').textContent(), name === '__proto__' ? '5 / 1s, burst 5' : 'none', `limits of ${name}`);
      assert.doesNotMatch(cells.join(' '), /function|native code|Invalid Date|undefined|NaN/, `row of ${name}`);
    }
    await w.page.screenshot({ path: `${SHOTS}/topics-hostile.png`, fullPage: true });
    for (const name of ['constructor', '__proto__']) {
      await w.page.goto(`${server.address}/ui/#/tasks/${encodeURIComponent(name)}`);
      await w.page.getByTestId('task-id').getByText(name, { exact: true }).waitFor();
    }
    assertClean(w);
    for (const name of names) assert.equal((await api('DELETE', `/v1/topics/${name}/tasks?state=pending`)).status, 200);
    assert.equal((await api('DELETE', '/v1/topics/__proto__/limits')).status, 200);
  });

  it('push: 100 subscriptions a page by topic, with Next and Previous, each with its last failed push', async () => {
    const topics = Array.from({ length: 105 }, (_, i) => `zz-push-${String(i).padStart(3, '0')}`);
    for (const topic of topics) assert.equal((await api('PUT', `/v1/topics/${topic}/push`, { url: 'http://127.0.0.1:9/hook' })).status, 201);
    try {
      const w = await openPage('#/push');
      const table = w.page.getByTestId('push-table');
      const rows = table.locator('tbody tr[data-topic]');
      await table.locator('tr[data-topic="zz-push-099"]').waitFor();
      assert.equal(await table.locator('tr[data-topic="zz-push-100"]').count(), 0);
      assert.ok((await rows.count()) === 100);
      await w.page.getByTestId('push-next-page').click();
      await table.locator('tr[data-topic="zz-push-104"]').waitFor();
      assert.equal(await w.page.getByTestId('push-next-page').isDisabled(), true);
      await w.page.getByTestId('push-prev-page').click();
      await table.locator('tr[data-topic="zz-push-000"]').waitFor();
      assertClean(w);
    } finally {
      for (const topic of topics) await api('DELETE', `/v1/topics/${topic}/push`);
    }
  });

  it('serves every page under a strict CSP, and no /ui file needs the token', async () => {
    const response = await fetch(`${server.address}/ui/`);
    assert.equal(response.status, 200);
    const csp = response.headers.get('content-security-policy') ?? '';
    assert.match(csp, /default-src 'none'/);
    assert.match(csp, /script-src 'self'(;|$)/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
    const html = await response.text();
    assert.doesNotMatch(html, /<script(?![^>]*\bsrc=)[^>]*>/, 'no inline script');
    assert.equal((await fetch(`${server.address}/v1/stats`)).status, 401);
  });
});
