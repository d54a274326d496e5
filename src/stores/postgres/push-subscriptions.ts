/** The PostgreSQL store's push subscriptions: a row per topic, one JSON text each (push-subscription-codec.ts). */
import type { PushSubscription } from '../../core/push.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { encodePushSubscription } from '../push-subscription-codec.js';
import type { PushSubscriptionPart } from '../shared/record-roles.js';
import type { PgContext } from './context.js';

export class PgPushSubscriptions implements PushSubscriptionPart {
  constructor(
    private readonly pg: PgContext,
    private readonly reader: StoredRecordReader,
  ) {}

  async put(subscription: PushSubscription): Promise<void> {
    await this.pg.query(this.pg.sql('push-put'), [subscription.topic, encodePushSubscription(subscription), subscription.updatedAt]);
  }

  async get(topic: string): Promise<PushSubscription | null> {
    const rows = await this.pg.query<{ subscription: string }>(this.pg.sql('push-get'), [topic]);
    return rows[0] === undefined ? null : this.reader.pushSubscription(topic, rows[0].subscription);
  }

  async list(): Promise<PushSubscription[]> {
    const rows = await this.pg.query<{ topic: string; subscription: string }>(this.pg.sql('push-list'), []);
    return this.reader.pushSubscriptions(rows.map((r) => [r.topic, r.subscription] as const));
  }

  async delete(topic: string): Promise<boolean> {
    const rows = await this.pg.query(this.pg.sql('push-delete'), [topic]);
    return rows.length > 0;
  }
}
