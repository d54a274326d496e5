/**
 * Without @opentelemetry/api (module resolution refuses it, in a child process) delayq
 * works as before and carries the trace context: with no OpenTelemetry set up it does not
 * even try to import the API; with one set up but the package missing, the one import it
 * tries fails quietly.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';

const PARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';

function run(mode: 'plain' | 'registered'): { out: { delivery: [string, string]; pushed: string }; attempts: string[] } {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-otel-'));
  try {
    const log = join(dir, 'attempts');
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'without-otel.ts'), mode], {
      encoding: 'utf8',
      env: { ...process.env, TRACE_ATTEMPTS: log },
    });
    assert.equal(child.status, 0, child.stderr);
    let attempts: string[] = [];
    try {
      attempts = readFileSync(log, 'utf8').split('\n').filter(Boolean);
    } catch {
      // No attempt, no file.
    }
    return { out: JSON.parse(child.stdout.trim().split('\n').at(-1)!) as { delivery: [string, string]; pushed: string }, attempts };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

function assertCarried(out: { delivery: [string, string]; pushed: string }): void {
  assert.deepEqual(out.delivery, [PARENT, 'a=1']);
  assert.match(out.pushed, /^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-01$/);
  assert.notEqual(out.pushed, PARENT);
}

describe('trace context without @opentelemetry/api', () => {
  it('with no OpenTelemetry set up, nothing of it is loaded or even resolved, and the trace is carried', () => {
    const { out, attempts } = run('plain');
    assert.deepEqual(attempts, []);
    assertCarried(out);
  });

  it('with OpenTelemetry set up but the package missing, the one failed import changes nothing', () => {
    const { out, attempts } = run('registered');
    assert.deepEqual(attempts, ['@opentelemetry/api']);
    assertCarried(out);
  });
});
