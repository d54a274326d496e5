/**
 * Redis as a backend of the remote timers (coordination/remote-timers.ts): timer lines go on
 * the timers channel by PUBLISH, a shard's timers are read by load-due.lua after its parked
 * tasks due by then are moved back into it.
 */
import type { RemoteTimerBackend } from '../../coordination/remote-timers.js';
import { loadDueScript } from './commands.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import type { Unparker } from './parking.js';

/** Timer lines per published message, well within what a receiver takes (MAX_NOTICE_LINES). */
const PUBLISH_LINES = 1_000;

export function redisTimerBackend(client: RedisClient, keys: Keyspace, unparker: Unparker): RemoteTimerBackend {
  return {
    shards: keys.shards.length,
    publish(lines) {
      // Fire and forget: the owner's recoverer finds a timer whose message was lost once it is
      // 2 s overdue (overdue-recoverer.ts); its loader, which reads forward only, would not.
      for (let at = 0; at < lines.length; at += PUBLISH_LINES) client.publish(keys.timerChannel, lines.slice(at, at + PUBLISH_LINES).join('\n')).catch(() => undefined);
    },
    async loadDuePage({ shard, until, after, limit }) {
      const page = await loadDueScript(client, keys.shards[shard]!, until, after, limit);
      return page.map((entry) => ({ ...entry }));
    },
    prepareShard: (shard, until) => unparker.prepare(shard, until),
  };
}
