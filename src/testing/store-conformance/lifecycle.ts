/** The store suite's cases of "lifecycle" (runStoreConformance, ./index.ts). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TaskStore } from '../../core/ports/index.js';
import { T0, task } from './fixtures.js';

/** `store` is the store of the case running: a fresh one for each. */
export function lifecycleCases(store: TaskStore): void {
  describe('lifecycle', () => {
    it('rejects calls after close', async () => {
      await store.close();
      await assert.rejects(() => store.tasks.get('a'));
      await assert.rejects(() => store.tasks.schedule([task('a')], T0));
      await store.close(); // idempotent: the cleanup closes it once more
    });
  });
}
