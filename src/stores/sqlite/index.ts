/**
 * `sqlite:<path>`: the durable embedded store. See docs/sqlite.md for what it guarantees.
 */
import { DelayQError } from '../../core/errors.js';
import { silentLogger } from '../../core/logger.js';
import type { Clock, TaskStore } from '../../core/ports/index.js';
import type { StoreOptions } from '../open-store.js';
import { STORE_OPTIONS } from '../../core/option-table/index.js';
import { intOption } from '../shared/store-options.js';
import { openConnection } from './connection.js';
import { chooseBucketWidth } from './parking.js';
import { SqliteStore } from './sqlite-store.js';

/** Page cache: enough for the hot end of the due index; RSS stays flat with millions of rows. */
const CACHE_KIB = 32 * 1024;

export interface SqliteStoreOptions extends StoreOptions {
  /** Runs the group commits and the checkpoint passes: the store reads no clock of its own. */
  clock: Clock;
  /** Tests only: the park bucket width of a file with nothing parked (default 2^26 ms; see parking.ts). */
  parkBucketMs?: number;
}

export async function openSqliteStore(path: string, options: SqliteStoreOptions): Promise<TaskStore> {
  // Defaults and bounds: the options table (src/core/option-table/stores.ts).
  const horizonMs = intOption('horizonMs', options.horizonMs);
  const synchronous = options.synchronous ?? STORE_OPTIONS.synchronous.default;
  if (!(STORE_OPTIONS.synchronous.values as readonly string[]).includes(synchronous))
    throw new DelayQError('INVALID_OPTION', `synchronous: must be 'NORMAL' or 'FULL' (got ${String(synchronous)})`, { field: 'synchronous' });
  const logger = options.logger ?? silentLogger;
  const { clock } = options;
  const connection = openConnection(path, { synchronous, cacheKiB: CACHE_KIB, logger, clock });
  if (options.parkBucketMs !== undefined) {
    try {
      chooseBucketWidth(connection.db, options.parkBucketMs);
    } catch (error) {
      await connection.close();
      throw error;
    }
  }
  return new SqliteStore(connection, path, horizonMs, clock, logger);
}
