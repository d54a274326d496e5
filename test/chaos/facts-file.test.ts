// The facts channel of the kill tests (src/testing/facts-file.ts): a fact a child wrote
// before its SIGKILL reaches the parent even when the parent was not reading at the time,
// which is not so for the child's stdout, and a line the kill cut short is never read.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { FactsTail } from '../../src/testing/facts-file.js';

const child = join(import.meta.dirname, 'fixtures', 'facts-child.ts');

describe('facts file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-facts-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reads complete lines as the file grows, and never the last one a writer left unfinished', () => {
    const file = join(dir, 'tail.log');
    const tail = new FactsTail(file);
    assert.deepEqual(tail.poll(), [], 'no file yet');
    appendFileSync(file, 'S a 100\nS b 2');
    assert.deepEqual(tail.poll(), ['S a 100']);
    appendFileSync(file, '00\nD a 1 1');
    assert.deepEqual(tail.poll(), ['S b 200']);
    assert.deepEqual(tail.close(), [], 'the cut line is dropped');
  });

  it('keeps every fact written before a SIGKILL while the parent was not reading; the stdout pipe does not', { timeout: 60_000 }, async () => {
    // Far more one-line writes than a socket pair buffers (a few hundred): the rest waits in the child.
    const count = 5_000;
    const file = join(dir, 'killed.log');
    const proc = spawn(process.execPath, ['--import', 'tsx', child, file, String(count)], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
    const stdout = proc.stdout;
    if (stdout === null) throw new Error('no stdout pipe');
    stdout.pause();
    const queued = await new Promise<number>((resolve, reject) => {
      proc.once('message', (m: { queuedInMemory: number }) => resolve(m.queuedInMemory));
      proc.once('exit', (code) => reject(new Error(`the child exited early (${String(code)})`)));
    });
    const closed = new Promise<void>((resolve) => proc.once('close', () => resolve()));
    proc.kill('SIGKILL');
    let piped = '';
    stdout.setEncoding('utf8').on('data', (chunk: string) => (piped += chunk));
    stdout.resume();
    await closed;

    const tail = new FactsTail(file);
    assert.equal(tail.close().length, count, 'every line written to the file is read');
    const pipedLines = piped.split('\n').filter((l) => l !== '').length;
    assert.ok(queued > 0, 'the child held stdout writes in memory when it was killed');
    assert.ok(pipedLines < count, `the pipe lost the lines the kill caught in memory (${pipedLines} of ${count} arrived)`);
  });
});
