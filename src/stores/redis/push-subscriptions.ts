/**
 * The Redis store's push subscriptions: fields of one hash (keys.ts `push`), plain
 * commands, no script: each call reads or writes one field, or reads the whole (small) hash.
 */
import type { PushSubscription } from '../../core/push.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { encodePushSubscription } from '../push-subscription-codec.js';
import type { PushSubscriptionPart } from '../shared/record-roles.js';
import type { RedisClient } from './connection.js';
import { call, write } from './plain-commands.js';

export class RedisPushSubscriptions implements PushSubscriptionPart {
  constructor(
    private readonly client: RedisClient,
    /** keys.ts `push`. */
    private readonly key: string,
    private readonly reader: StoredRecordReader,
  ) {}

  async put(subscription: PushSubscription): Promise<void> {
    const json = encodePushSubscription(subscription);
    await write(this.client, `hset ${this.key}`, this.key, () => this.client.hset(this.key, subscription.topic, json), (p) => p.hset(this.key, subscription.topic, json));
  }

  async get(topic: string): Promise<PushSubscription | null> {
    const json = await call(() => this.client.hget(this.key, topic));
    return json === null ? null : this.reader.pushSubscription(topic, json);
  }

  async list(): Promise<PushSubscription[]> {
    return this.reader.pushSubscriptions(Object.entries(await call(() => this.client.hgetall(this.key))));
  }

  async delete(topic: string): Promise<boolean> {
    return Number(await write(this.client, `hdel ${this.key}`, this.key, () => this.client.hdel(this.key, topic), (p) => p.hdel(this.key, topic))) > 0;
  }
}
