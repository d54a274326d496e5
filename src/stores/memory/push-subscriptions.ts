/** The memory store's push subscriptions: one record per topic, listed in topic order. */
import type { PushSubscription } from '../../core/push.js';
import { byTopic } from '../push-subscription-codec.js';
import type { PushSubscriptionPart } from '../shared/record-roles.js';

export class MemoryPushSubscriptions implements PushSubscriptionPart {
  private readonly byTopic = new Map<string, PushSubscription>();

  put(subscription: PushSubscription): void {
    this.byTopic.set(subscription.topic, subscription);
  }

  get(topic: string): PushSubscription | null {
    return this.byTopic.get(topic) ?? null;
  }

  list(): PushSubscription[] {
    return [...this.byTopic.values()].sort(byTopic);
  }

  delete(topic: string): boolean {
    return this.byTopic.delete(topic);
  }
}
