/** The default push transport loads undici at the first push, not when delayq is imported. */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { isDelayQError } from '../../src/core/errors.js';
import { createLazyPushTransport } from '../../src/push/lazy-transport.js';

describe('lazy push transport', () => {
  it('import and open load no undici; a subscription does, before its first push is due', () => {
    const child = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures', 'undici-loaded.ts')], { encoding: 'utf8' });
    assert.equal(child.status, 0, child.stderr);
    assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1)!), { imported: false, opened: false, subscribed: true, pushed: true });
  });

  it('checks its options at once, and refuses URLs without loading anything', async () => {
    assert.throws(() => createLazyPushTransport({ allow: ['not a cidr'] }), (error: unknown) => isDelayQError(error, 'INVALID_OPTION'));
    const transport = createLazyPushTransport();
    await assert.rejects(transport.checkUrl('http://10.0.0.1/x'), (error: unknown) => isDelayQError(error, 'INVALID_URL'));
    await transport.close();
    assert.deepEqual(await transport.send({ url: 'http://127.0.0.1:9/', body: '{}', headers: {}, timeoutMs: 100 }), { kind: 'failure', reason: 'aborted' });
  });
});
