// The client's push methods against a real listening app whose queue pushes through a
// scripted transport (nothing is sent anywhere).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DelayQClient, isDelayQClientError } from '../../src/client/index.js';
import { systemClock } from '../../src/engine/timers/wall-clock.js';
import { ScriptedTransport, testSigner } from '../helpers/push.js';
import { openTestApp, type TestApp } from '../helpers/service.js';

describe('client push methods', () => {
  let t: TestApp;
  let client: DelayQClient;
  before(async () => {
    t = await openTestApp({ push: { transport: new ScriptedTransport(systemClock), signer: testSigner } });
    client = new DelayQClient({ url: await t.app.listen({ host: '127.0.0.1', port: 0 }) });
  });
  after(() => t.close());

  it('setPush, getPush, listPush, deletePush; null and false for a topic without one', async () => {
    const set = await client.setPush('orders', { url: 'https://hooks.example.com/orders', concurrency: 2 });
    assert.match(set.secret ?? '', /^whsec_/);
    assert.equal(set.subscription.concurrency, 2);
    assert.deepEqual(await client.getPush('orders'), set.subscription);
    assert.deepEqual(await client.listPush(), [set.subscription]);
    assert.equal(await client.deletePush('orders'), true);
    assert.equal(await client.deletePush('orders'), false);
    assert.equal(await client.getPush('orders'), null);
    await assert.rejects(client.setPush('orders', { url: 'http://10.0.0.1/' }), (error) => isDelayQClientError(error) && error.code === 'INVALID_URL' && error.status === 400);
  });
});
