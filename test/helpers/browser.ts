/**
 * The browser of the dashboard tests: Debian's Chromium (chromium-headless-shell, or
 * chromium), driven by playwright-core. Its path is always given (playwright-core would
 * otherwise look for a browser of its own, which cannot be downloaded here). A machine
 * without it fails the tests: .ci/run installs it; they are never skipped.
 */
// test-needs: chromium
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

const CANDIDATES = ['/usr/lib/chromium/chromium-headless-shell', '/usr/bin/chromium-headless-shell', '/usr/lib/chromium/chromium', '/usr/bin/chromium'];

export function chromiumPath(): string {
  const given = process.env['DELAYQ_CHROMIUM'];
  const found = given !== undefined && given !== '' ? given : CANDIDATES.find((path) => existsSync(path));
  if (found === undefined || !existsSync(found))
    throw new Error(`no Chromium for the dashboard tests: install Debian's (apt-get install chromium-headless-shell, or chromium), as .ci/run does, or set DELAYQ_CHROMIUM (looked at ${CANDIDATES.join(', ')})`);
  return found;
}

/** `args`: more Chromium switches (a test's own host resolver rules, say). */
export function launchBrowser(args: readonly string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--no-first-run', ...args],
  });
}
