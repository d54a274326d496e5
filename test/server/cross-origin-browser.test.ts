// A real browser on a page of another origin tries what a malicious site would against a
// delayq server without a token: a body-less no-cors POST, a text/plain one, a form post,
// and a JSON fetch (which needs a preflight the server never grants). None may pause the
// schedule; the same page script on the server's own origin may.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../helpers/browser.js';
import { openTestApp, type TestApp } from '../helpers/service.js';

describe('a page of another origin, in Chromium, against a server without a token', () => {
  let t: TestApp;
  let api: string;
  let browser: Browser;
  let evil: Server;
  let evilOrigin: string;

  before(async () => {
    // The browser first: a machine without one fails here, before a server holds the process open.
    browser = await launchBrowser();
    t = await openTestApp();
    api = await t.app.listen({ host: '127.0.0.1', port: 0 });
    evil = createServer((_request, response) => response.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>elsewhere</title>'));
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    evilOrigin = `http://127.0.0.1:${(evil.address() as AddressInfo).port}`;
  });
  // Each closed on its own: what `before` never started (no browser on this machine) rejects
  // here and is let go, while what it did start is still closed, so nothing holds the run open.
  after(async () => {
    await Promise.allSettled([
      (async () => browser.close())(),
      new Promise<void>((resolve) => evil.close(() => resolve())),
      (async () => t.close())(),
    ]);
  });

  const pausedNow = async (): Promise<boolean> => (await t.queue.schedules.get('s1'))?.paused === true;

  it('cannot pause a schedule by any simple request, nor by a preflighted one', async () => {
    await t.queue.schedules.upsert('s1', { topic: 'x', everyMs: 60_000 });
    const page = await browser.newPage();
    try {
      await page.goto(`${evilOrigin}/`);
      const target = `${api}/v1/schedules/s1/pause`;
      // A string, not a function: tsx would wrap the function's inner names in a helper the page lacks.
      const outcomes = await page.evaluate<Record<string, string>>(`(async (url) => {
        const tries = {};
        const attempt = async (name, init) => {
          try {
            const answer = await fetch(url, init);
            tries[name] = 'answered ' + answer.type + ' ' + answer.status;
          } catch (error) {
            tries[name] = 'failed: ' + error.message;
          }
        };
        await attempt('no-cors, no body', { method: 'POST', mode: 'no-cors' });
        await attempt('no-cors, text/plain', { method: 'POST', mode: 'no-cors', body: '{}', headers: { 'content-type': 'text/plain' } });
        await attempt('cors, JSON', { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
        // A form post into a frame, as a hidden form on a page would.
        const frame = document.createElement('iframe');
        frame.name = 'sink';
        document.body.append(frame);
        const form = document.createElement('form');
        form.method = 'POST';
        form.action = url;
        form.target = 'sink';
        document.body.append(form);
        const loaded = new Promise((resolve) => frame.addEventListener('load', resolve, { once: true }));
        form.submit();
        await loaded;
        tries['form post'] = 'submitted';
        return tries;
      })(${JSON.stringify(target)})`);
      assert.equal(await pausedNow(), false, JSON.stringify(outcomes));
      // The preflighted JSON fetch never reaches the route: the browser refuses it itself.
      assert.match(outcomes['cors, JSON'] ?? '', /^failed/);
    } finally {
      await page.close();
    }
  });

  it('the same fetch from the server\'s own origin (the dashboard\'s way) pauses it', async () => {
    const page = await browser.newPage();
    try {
      await page.goto(`${api}/healthz`);
      const url = JSON.stringify(`${api}/v1/schedules/s1/pause`);
      const status = await page.evaluate(`fetch(${url}, { method: 'POST', headers: { 'content-type': 'application/json' } }).then((answer) => answer.status)`);
      assert.equal(status, 200);
      assert.equal(await pausedNow(), true);
    } finally {
      await page.close();
    }
  });
});

// DNS rebinding (issue 45): the attacker's page is served from its own name, which then
// resolves to this server; to the browser the API is then of the page's own origin, so Origin
// and Sec-Fetch-Site say "same origin". Chromium resolves the name to 127.0.0.1 here through a
// resolver rule, as a rebound DNS answer would.
describe('a rebound name, in Chromium, against a server without a token', () => {
  let t: TestApp;
  let port: number;
  let browser: Browser;

  before(async () => {
    browser = await launchBrowser(['--host-resolver-rules=MAP rebind.attacker.example 127.0.0.1']);
    t = await openTestApp();
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(async () => {
    await Promise.allSettled([(async () => browser.close())(), (async () => t.close())()]);
  });

  it('cannot pause a schedule from a page of that name, though the browser calls it same-origin; the server answers 421', async () => {
    await t.queue.schedules.upsert('s2', { topic: 'x', everyMs: 60_000 });
    const page = await browser.newPage();
    try {
      // The page loads from the server itself (a public route answers any Host), as after the rebinding.
      const loaded = await page.goto(`http://rebind.attacker.example:${port}/healthz`);
      assert.equal(loaded?.status(), 200);
      const answer = await page.evaluate<{ status: number; body: string }>(
        `fetch('/v1/schedules/s2/pause', { method: 'POST', headers: { 'content-type': 'application/json' } }).then(async (a) => ({ status: a.status, body: await a.text() }))`,
      );
      assert.equal(answer.status, 421, answer.body);
      assert.equal((JSON.parse(answer.body) as { error: { code: string } }).error.code, 'HOST_NOT_ALLOWED');
      assert.equal((await t.queue.schedules.get('s2'))?.paused, false);
    } finally {
      await page.close();
    }
  });
});
