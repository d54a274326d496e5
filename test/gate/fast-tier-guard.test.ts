// The fast tier's check (scripts/fast-tier-guard.ts), run as scripts/run-tests.ts runs the
// fast files, over fixtures that break the rule and one that keeps it.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nodeTestArgs } from '../../scripts/test-tiers.js';
import { runNode, type NodeTestRun } from '../helpers/node-test.js';
import { freePort } from '../helpers/ports.js';

function runFast(fixture: string, env: NodeJS.ProcessEnv = {}): Promise<NodeTestRun> {
  return runNode([...nodeTestArgs({ guarded: true }), '--test-reporter=tap', `test/gate/fixtures/${fixture}.ts`], env);
}

describe('the fast tier fails a test that leaves its process', () => {
  it('a test that starts a process fails, naming the call', async () => {
    const { code, output } = await runFast('spawns');
    assert.equal(code, 1, output);
    assert.match(output, /fast tier: .*spawns\.ts started a process \(child_process\.spawnSync/);
  });

  it('a test that connects to a port it does not serve fails, even if it swallows the error', async () => {
    const port = await freePort();
    const { code, output } = await runFast('connects-elsewhere', { GATE_FIXTURE_PORT: String(port) });
    assert.equal(code, 1, output);
    assert.match(output, new RegExp(`fast tier: .*connects-elsewhere\\.ts connected to 127\\.0\\.0\\.1:${port}, which this process does not listen on`));
    assert.match(output, /# pass 1/); // its test passed: the file fails by the guard alone
  });

  it('a test that opens a Redis store by URL alone fails', async () => {
    const port = await freePort();
    const { code, output } = await runFast('opens-redis-url', { GATE_FIXTURE_PORT: String(port) });
    assert.equal(code, 1, output);
    assert.match(output, new RegExp(`connected to 127\\.0\\.0\\.1:${port}`));
  });

  it('a test that serves HTTP on an ephemeral port and calls it passes', async () => {
    const { code, output } = await runFast('own-server');
    assert.equal(code, 0, output);
  });
});
