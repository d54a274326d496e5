import { DelayQError } from '../../core/errors.js';
import type { TaskStore } from '../../core/ports.js';
import type { StoreOptions } from '../open-store.js';

// Placeholder until the Redis store lands (issue 5).
export function openRedisStore(url: string, _options: StoreOptions): Promise<TaskStore> {
  return Promise.reject(new DelayQError('INVALID_STORE_URL', `redis store (${url}) is not available in this build`));
}
