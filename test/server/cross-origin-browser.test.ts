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
