/**
 * The schema history, oldest first. A migration is never edited once released: a change
 * is a new numbered file appended here. `version` is what PRAGMA user_version holds after
 * the migration ran, so a database says by itself how far it has been migrated.
 */
import { sql as initial } from './0001_initial.js';

export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

export const MIGRATIONS: readonly Migration[] = [{ version: 1, name: '0001_initial', sql: initial }];

export const LATEST_VERSION = MIGRATIONS.length;
