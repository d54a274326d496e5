// Ids the server generates go back into the CLI as plain arguments: `delayq get <id>` and
// `delayq cancel <id>` against a real `delayq serve` process. An id starting with '-' was
// taken for an option ("unknown option") before generated ids stopped starting with one.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { runCliProcess, spawnServer, type CliResult, type SpawnedServer } from '../helpers/service-process.js';

describe('delayq CLI with generated ids', () => {
  let server: SpawnedServer;
  const cli = (...args: string[]): Promise<CliResult> => runCliProcess(['--server', server.address, ...args]);
  const json = <T>(result: CliResult): T => {
    assert.equal(result.code, 0, result.stderr);
    return JSON.parse(result.stdout) as T;
  };

  before(async () => {
    server = await spawnServer(['--store', 'memory']);
  });
  after(async () => {
    await server.stop();
  });

  it('gets and cancels tasks by the ids the server made up', async () => {
    const added = await Promise.all([1, 2, 3].map((n) => cli('add', 'ids', '--delay', '1h', '--payload', `{"n":${n}}`, '--json')));
    const ids = added.map((r) => json<{ id: string; created: boolean }>(r).id);
    assert.equal(new Set(ids).size, 3);
    for (const id of ids) assert.doesNotMatch(id, /^-/);

    const got = await Promise.all(ids.map((id) => cli('get', id, '--json')));
    assert.deepEqual(
      got.map((r) => json<{ id: string; state: string; payload: { n: number } }>(r)).map(({ id, state, payload }) => ({ id, state, n: payload.n })),
      ids.map((id, i) => ({ id, state: 'pending', n: i + 1 })),
    );

    assert.deepEqual(json(await cli('cancel', ids[0]!, '--json')), { id: ids[0], cancelled: true });
    const both = await cli('cancel', ids[1]!, ids[2]!);
    assert.equal(both.code, 0, both.stderr);
    assert.equal(both.stdout, `cancelled ${ids[1]}\ncancelled ${ids[2]}\n`);

    const cancelled = await Promise.all(ids.map((id) => cli('get', id, '--json')));
    assert.deepEqual(
      cancelled.map((r) => json<{ state: string }>(r).state),
      ['cancelled', 'cancelled', 'cancelled'],
    );
  });
});
