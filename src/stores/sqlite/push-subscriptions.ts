/**
 * The SQLite store's push subscriptions: a row per topic (migration 0005), written through
 * the group commit like any task change, so a put or delete resolves only once it is as
 * durable as a schedule.
 */
import type { PushSubscription } from '../../core/push.js';
import type { StoredRecordReader } from '../decode-or-warn.js';
import { encodePushSubscription } from '../push-subscription-codec.js';
import type { PushSubscriptionPart } from '../shared/record-roles.js';
import type { SubmitWrite } from './group-commit.js';
import type { Statements } from './statements.js';

export class SqlitePushSubscriptions implements PushSubscriptionPart {
  constructor(
    private readonly sql: Statements,
    private readonly write: SubmitWrite,
    private readonly reader: StoredRecordReader,
  ) {}

  put(subscription: PushSubscription): Promise<void> {
    const json = encodePushSubscription(subscription);
    return this.write(1, () => void this.sql.putPush.run(subscription.topic, json, subscription.updatedAt), true);
  }

  get(topic: string): PushSubscription | null {
    const json = this.sql.getPush.get(topic);
    return json === undefined ? null : this.reader.pushSubscription(topic, json);
  }

  list(): PushSubscription[] {
    return this.reader.pushSubscriptions(this.sql.listPush.all());
  }

  delete(topic: string): Promise<boolean> {
    return this.write(1, () => this.sql.deletePush.run(topic).changes > 0, true);
  }
}
