/**
 * The API reference at /docs/ on a real server with a token: public like /openapi.json,
 * every file from this server (no CDN) under the dashboard's Content-Security-Policy, and in
 * Chromium it renders every operation and calls the API ("Try it out") with nothing refused.
 * A screenshot goes to .screenshots/docs.png (gitignored).
 */
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { pino } from 'pino';
import type { Browser } from 'playwright-core';
import { parseServerConfig } from '../../src/server/config.js';
import { startServer, type RunningServer } from '../../src/server/main.js';
import { PAGE_CSP } from '../../src/server/routes/page-headers.js';
import { launchBrowser } from '../helpers/browser.js';

const TOKEN = 'docs-test-token';

describe('the API reference at /docs', () => {
  let server: RunningServer;
  let browser: Browser | undefined;

  before(async () => {
    const config = parseServerConfig({ store: 'memory', port: '0', token: TOKEN, logLevel: 'silent' }, {});
    server = await startServer(config, pino({ level: 'silent' }));
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  const get = (path: string, headers: Record<string, string> = {}): Promise<Response> => fetch(server.address + path, { redirect: 'manual', headers });

  it('serves the page and each file it loads without the token, from this server only, under the CSP', async () => {
    const redirect = await get('/docs');
    assert.deepEqual([redirect.status, redirect.headers.get('location')], [301, '/docs/']);
    const page = await get('/docs/');
    assert.equal(page.status, 200);
    assert.match(page.headers.get('content-type') ?? '', /^text\/html/);
    assert.equal(page.headers.get('content-security-policy'), PAGE_CSP);
    assert.equal(page.headers.get('x-content-type-options'), 'nosniff');
    const html = await page.text();
    // No external URL of any form: absolute, protocol-relative, or in an inline script or style.
    assert.doesNotMatch(html, /https?:|\/\/[a-z0-9]|<style|<script>|\bstyle=|\bon[a-z]+=/i);
    const files = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((match) => match[1]!);
    assert.deepEqual(files, ['assets/swagger-ui.css', 'assets/favicon-32x32.png', 'assets/swagger-ui-bundle.js', 'init.js']);
    const types: Record<string, RegExp> = { css: /^text\/css/, png: /^image\/png/, js: /^(text|application)\/javascript/ };
    for (const file of files) {
      const answer = await get(`/docs/${file}`);
      assert.equal(answer.status, 200, file);
      assert.match(answer.headers.get('content-type') ?? '', types[file.split('.').at(-1)!]!, file);
      assert.equal(answer.headers.get('content-security-policy'), PAGE_CSP, file);
      assert.ok((await answer.arrayBuffer()).byteLength > 0, file);
    }
    const init = await (await get('/docs/init.js')).text();
    assert.match(init, /url: '\.\.\/openapi\.json'/);
    assert.match(init, /validatorUrl: null/);
    assert.match(init, /requestInterceptor/);
    const spec = await get('/openapi.json');
    assert.equal(spec.status, 200);
    assert.equal(((await spec.json()) as { openapi: string }).openapi, '3.0.3');
    // Only the files the page needs: the package's other files are not served, and the API still needs the token.
    assert.equal((await get('/docs/assets/index.html', { authorization: `Bearer ${TOKEN}` })).status, 404);
    assert.equal((await get('/docs/assets/swagger-ui-es-bundle.js', { authorization: `Bearer ${TOKEN}` })).status, 404);
    assert.equal((await get('/v1/stats')).status, 401);
  });

  it('renders every operation in Chromium and runs one, with no request to another origin and no console error', async () => {
    browser = await launchBrowser();
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const page = await context.newPage();
    const errors: string[] = [];
    const elsewhere: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') errors.push(message.text());
    });
    page.on('pageerror', (error) => errors.push(`pageerror: ${error.message}`));
    page.on('request', (request) => {
      if (!request.url().startsWith(`${server.address}/`) && !request.url().startsWith('data:')) elsewhere.push(request.url());
    });
    await page.goto(`${server.address}/docs/`);
    await page.locator('#operations-tasks-scheduleTask').waitFor({ timeout: 30_000 });
    assert.equal(await page.locator('.opblock').count(), 42);
    // "Try it out" on GET /healthz: the page calls this server (connect-src 'self').
    const health = page.locator('#operations-system-getHealth');
    await health.locator('.opblock-summary').first().click();
    await health.locator('.try-out__btn').click();
    await health.locator('.execute').click();
    await health.locator('.live-responses-table tr.response .response-col_status').first().waitFor({ timeout: 15_000 });
    assert.equal((await health.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim(), '200');
    // Authorize with the token, then pause a schedule: a POST with no body, which the page still sends as JSON.
    const put = await fetch(`${server.address}/v1/schedules/docs-demo`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ topic: 'docs', everyMs: 60_000 }),
    });
    assert.equal(put.status, 201);
    await page.locator('.scheme-container button.authorize').click();
    await page.locator('.auth-container input').first().fill(TOKEN);
    await page.locator('.auth-btn-wrapper button.authorize').click();
    await page.locator('.auth-btn-wrapper button.btn-done').click();
    const pause = page.locator('#operations-schedules-pauseSchedule');
    await pause.locator('.opblock-summary').first().click();
    await pause.locator('.try-out__btn').click();
    await pause.locator('tr[data-param-name="id"] input').fill('docs-demo');
    await pause.locator('.execute').click();
    await pause.locator('.live-responses-table tr.response .response-col_status').first().waitFor({ timeout: 15_000 });
    assert.equal((await pause.locator('.live-responses-table tr.response .response-col_status').first().innerText()).trim(), '200');
    const schedule = await fetch(`${server.address}/v1/schedules/docs-demo`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(((await schedule.json()) as { schedule: { paused: boolean } }).schedule.paused, true);
    mkdirSync('.screenshots', { recursive: true });
    await page.screenshot({ path: '.screenshots/docs.png' });
    assert.deepEqual(elsewhere, []);
    assert.deepEqual(errors, []);
    await context.close();
  });
});
