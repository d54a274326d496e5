import { DelayQError } from '../../core/errors.js';
import type { TaskStore } from '../../core/ports.js';
import type { StoreOptions } from '../open-store.js';

// Placeholder until the SQLite store lands (issue 3).
export function openSqliteStore(path: string, _options: StoreOptions): Promise<TaskStore> {
  return Promise.reject(new DelayQError('INVALID_STORE_URL', `sqlite store (${path}) is not available in this build`));
}
