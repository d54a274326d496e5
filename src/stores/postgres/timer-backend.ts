/**
 * PostgreSQL as a backend of the remote timers (coordination/remote-timers.ts): timer lines
 * go on the timers channel by NOTIFY (packed into payloads under its 8,000-byte limit), a
 * shard's timers are read from `tasks_due` by load-due.sql.
 */
import type { RemoteTimerBackend } from '../../coordination/remote-timers.js';
import { packLines, type Channels } from './channels.js';
import type { PgContext } from './context.js';
import { loadDue } from './inspection.js';

export function pgTimerBackend(pg: PgContext, channels: Channels): RemoteTimerBackend {
  return {
    shards: pg.shards,
    publish(lines) {
      pg.query(pg.sql('notify'), [channels.timers, packLines(lines)]).catch(() => undefined);
    },
    loadDuePage: ({ shard, until, after, limit }) => loadDue(pg, until, after, limit, [shard]),
  };
}
