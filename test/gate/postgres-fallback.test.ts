// The PostgreSQL server of a test run (test/helpers/postgres-server.ts, called once per run
// by scripts/run-tests.ts): with nothing answering at the machine's address, the run starts
// a cluster of its own, and the PostgreSQL test files pass on it.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { nodeTestArgs } from '../../scripts/test-tiers.js';
import { runNode } from '../helpers/node-test.js';
import { freePort } from '../helpers/ports.js';
import { probe, testPostgres, type TestPostgres } from '../helpers/postgres-server.js';

describe("a test run's PostgreSQL", () => {
  let started: TestPostgres | null = null;
  after(() => started?.cluster?.remove());

  it('with nothing at the machine address: a cluster of its own (initdb + pg_ctl), where the PostgreSQL tests pass, removed after', async () => {
    const nobody = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    assert.equal(await probe(nobody), 'absent');
    const server = await testPostgres(undefined, nobody);
    started = server;
    assert.ok(server.cluster !== null);
    assert.match(server.description, /nothing answers at .*: a cluster of the run's own/);
    assert.notEqual(server.url, nobody);
    assert.equal(await probe(server.url), 'answers');

    const run = await runNode(
      [...nodeTestArgs({ guarded: false }), '--test-reporter=tap', 'test/stores/postgres/array-literal.test.ts', 'test/stores/postgres/transactions.test.ts'],
      { DELAYQ_TEST_PG: server.url },
    );
    assert.equal(run.code, 0, run.output);
    assert.match(run.output, /# fail 0/);

    server.cluster.remove();
    assert.equal(server.cluster.running(), false);
    assert.equal(existsSync(server.cluster.dir), false);
    assert.equal(await probe(server.url), 'absent');
  });

  it('DELAYQ_TEST_PG that does not answer fails the run before any test, saying so', async () => {
    const nobody = `postgres://postgres@127.0.0.1:${await freePort()}/test`;
    await assert.rejects(() => testPostgres(nobody), /DELAYQ_TEST_PG=.* does not answer \(nothing listens there\)/);
    const run = await runNode(['--import', 'tsx', 'scripts/run-tests.ts', 'test/stores/postgres/array-literal'], { DELAYQ_TEST_PG: nobody });
    assert.equal(run.code, 1, run.output);
    assert.match(run.output, /postgres: DELAYQ_TEST_PG=.* does not answer/);
    assert.doesNotMatch(run.output, /# (tests|pass)/);
  });
});
