/**
 * The write that tells whether a shard takes writes again (shard-health.ts): a short-lived
 * key of the shard, set under the store's waitReplicas like any write.
 *
 * On its own connection, opened at the first probe: WAIT holds the connection it runs on
 * until the replicas answer or its timeout passes, and a probe every second of a degraded
 * master (whose shards all share one connection per node) would hold that node's other
 * commands behind it, the namespace's heartbeat and seq counter among them when their slot
 * is there.
 */
import { isDelayQError } from '../../core/errors.js';
import type { Clock } from '../../core/ports/index.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';
import { write } from './plain-commands.js';
import { requireReplicas, waitSetting } from './replication.js';

/** How long a shard's probe key outlives the probe: it only has to be written. */
const PROBE_TTL_MS = 60_000;

export class ShardProbe {
  private own: RedisClient | null = null;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keyspace,
    private readonly clock: Clock,
  ) {}

  async probe(shard: number): Promise<void> {
    const client = this.connection();
    const key = this.keys.shards[shard]!.probe;
    const value = String(this.clock.now());
    try {
      await write(client, 'probe', key, () => client.set(key, value, 'PX', PROBE_TTL_MS), (pipeline) => pipeline.set(key, value, 'PX', PROBE_TTL_MS));
    } catch (error) {
      // Anything but too few replicas (a node gone, slots moved by a failover, which a
      // pipeline does not follow): the next probe starts from a fresh connection and slot map.
      if (!(isDelayQError(error) && error.details?.['waitReplicas'] !== undefined)) void this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    const own = this.own;
    this.own = null;
    if (own !== null) await own.quit().catch(() => own.disconnect());
  }

  private connection(): RedisClient {
    if (this.own === null) {
      this.own = this.client.duplicate();
      // Its failures reach the probe's calls; without a listener ioredis prints each one.
      this.own.on('error', () => undefined);
      const wait = waitSetting(this.client);
      if (wait !== undefined) requireReplicas(this.own, wait);
    }
    return this.own;
  }
}
