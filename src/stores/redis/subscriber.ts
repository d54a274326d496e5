/**
 * The store's pub/sub connection: ready notifications per topic (wake consumers) and
 * near-window timers for shard owners. Subscribes to a topic's channel when a consumer of
 * the topic first waits. ioredis resubscribes after a reconnect; messages sent meanwhile
 * are lost, so `onReconnect` lets the store re-check everything.
 */
import { BadNotice, parseRedisReadyNotice, type NoticeGuard } from '../../coordination/notices.js';
import type { RedisClient } from './connection.js';
import type { Keyspace } from './keys.js';

export interface SubscriberEvents {
  /** Tasks of `topic` became ready on `shard`, promoted by the process `owner`; `ranked`: some above priority 0. */
  ready(topic: string, shard: number, owner: string, ranked: boolean): void;
  timers(message: string): void;
  reconnected(): void;
}

export class Subscriber {
  private readonly topics = new Map<string, Promise<unknown>>();
  private readonly channels = new Map<string, string>();
  private connectedOnce = false;

  private constructor(
    private readonly connection: RedisClient,
    private readonly keys: Keyspace,
  ) {}

  /** `guard`: where a ready message no process of ours sends is dropped (notices.ts; timers messages are the RemoteTimers'). */
  static async open(client: RedisClient, keys: Keyspace, guard: NoticeGuard, events: SubscriberEvents): Promise<Subscriber> {
    const connection = client.duplicate();
    const subscriber = new Subscriber(connection, keys);
    connection.on('message', (channel: string, message: string) => {
      if (channel === keys.timerChannel) return events.timers(message);
      const topic = subscriber.channels.get(channel);
      if (topic === undefined) return;
      const ready = parseRedisReadyNotice(message, keys.shards.length);
      if (ready instanceof BadNotice) guard.drop('ready', ready, message);
      else events.ready(topic, ready.shard, ready.owner, ready.ranked);
    });
    connection.on('ready', () => {
      if (subscriber.connectedOnce) events.reconnected();
      subscriber.connectedOnce = true;
    });
    // Errors surface through reconnects; without a listener ioredis would log them unhandled.
    connection.on('error', () => undefined);
    await connection.subscribe(keys.timerChannel);
    return subscriber;
  }

  /** Subscribes to the ready channel of `topic` (once). */
  watch(topic: string): Promise<unknown> {
    let subscribed = this.topics.get(topic);
    if (!subscribed) {
      const channel = this.keys.readyChannel(topic);
      this.channels.set(channel, topic);
      // A failed subscribe is forgotten, so the next consumer call tries again.
      subscribed = this.connection.subscribe(channel).catch((error: unknown) => {
        this.topics.delete(topic);
        throw error;
      });
      this.topics.set(topic, subscribed);
    }
    return subscribed;
  }

  async close(): Promise<void> {
    await this.connection.quit().catch(() => this.connection.disconnect());
  }
}
