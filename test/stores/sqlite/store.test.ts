import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteStore } from '../../../src/stores/sqlite/index.js';
import { storeSystemClock } from '../../../src/stores/system-clock.js';
import { runStoreConformance } from '../../conformance/store-conformance.js';

runStoreConformance('sqlite', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'delayq-sqlite-'));
  const store = await openSqliteStore(join(dir, 'tasks.db'), { clock: storeSystemClock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
});
