/**
 * The store suite's cases of text from outside (runStoreConformance, ./index.ts;
 * core/text.ts): an error handed to nack may hold NUL (which PostgreSQL refuses in text and
 * jsonb) and lone surrogates (which have no UTF-8 form), and be long. Every store keeps it
 * the same way: both become U+FFFD, lastError keeps MAX_ERROR_LENGTH characters and a
 * history entry HISTORY_ERROR_LIMIT, never half a surrogate pair. Before issue 45 a nack
 * with a NUL in its error failed on PostgreSQL: the task stayed reserved for its whole ttr.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { HISTORY_ERROR_LIMIT } from '../../core/task/history.js';
import { MAX_ERROR_LENGTH } from '../../core/text.js';
import { T0, task } from './fixtures.js';

const EMOJI = '\uD83D\uDE00';

/** `store` is the store of the case running: a fresh one for each. */
export function holdableTextCases(store: TaskStore): void {
  describe('text a store could not hold', () => {
    async function nackWith(id: string, error: string, maxAttempts: number): Promise<void> {
      await store.tasks.schedule([task(id, { runAt: T0, maxAttempts })], T0 - 10);
      const [reserved] = await store.tasks.reserve([id], T0);
      assert.ok(reserved?.receipt);
      const outcome = await store.tasks.nack({ id, receipt: reserved.receipt, now: T0 + 10, delayMs: 1_000, error, random: 0 });
      assert.equal(outcome.status, maxAttempts === 1 ? 'dead' : 'retrying', `${id}: the nack is settled`);
    }

    it('a NUL and lone surrogates in a nack\'s error become U+FFFD, in lastError and history alike; a retry and a burial both settle', async () => {
      const error = 'bad\u0000body \uD800 lone high, \uDC00 lone low, a pair ' + EMOJI + ' kept';
      const kept = 'bad\uFFFDbody \uFFFD lone high, \uFFFD lone low, a pair ' + EMOJI + ' kept';
      await nackWith('nul-retry', error, 3);
      await nackWith('nul-dead', error, 1);
      for (const id of ['nul-retry', 'nul-dead']) {
        const record = await store.tasks.get(id);
        assert.equal(record?.lastError, kept, `${id}: lastError`);
        assert.equal(record?.history.at(-1)?.error, kept, `${id}: its history entry`);
      }
      assert.equal((await store.tasks.get('nul-retry'))?.state, 'pending');
      assert.equal((await store.tasks.get('nul-retry'))?.runAt, T0 + 10 + 1_000, 'retried after the nack\'s delay, not held for its ttr');
      assert.equal((await store.tasks.get('nul-dead'))?.state, 'dead');
      assert.deepEqual((await store.tasks.list({ state: 'dead', limit: 10 })).map((r) => r.lastError), [kept]);
    });

    it(`a long error is cut to ${MAX_ERROR_LENGTH} characters (history ${HISTORY_ERROR_LIMIT}), never between the two halves of a pair`, async () => {
      // A pair straddles both cuts: characters HISTORY_ERROR_LIMIT and MAX_ERROR_LENGTH are its high halves.
      const error = 'a'.repeat(HISTORY_ERROR_LIMIT - 1) + EMOJI + 'b'.repeat(MAX_ERROR_LENGTH - HISTORY_ERROR_LIMIT - 2) + EMOJI + 'c'.repeat(100);
      await nackWith('long', error, 3);
      const record = await store.tasks.get('long');
      assert.equal(record?.lastError, error.slice(0, MAX_ERROR_LENGTH - 1));
      assert.equal(record?.history.at(-1)?.error, error.slice(0, HISTORY_ERROR_LIMIT - 1));
    });
  });
}
