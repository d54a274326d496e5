/** The store port's push subscription role: one record per topic. */
import type { PushSubscription } from '../push.js';

/**
 * Push subscriptions, one per topic, durable as tasks are. Small and rarely changed: every
 * engine process reads them all (listPushSubscriptions) when it starts and again every
 * `pushSyncMs`, so a subscription set through one process reaches the others.
 */
export interface PushSubscriptionStore {
  /** Creates or replaces the subscription of `subscription.topic`. */
  putPushSubscription(subscription: PushSubscription): Promise<void>;
  getPushSubscription(topic: string): Promise<PushSubscription | null>;
  /** Every subscription, by topic in ascending order. */
  listPushSubscriptions(): Promise<PushSubscription[]>;
  /** True if there was one. */
  deletePushSubscription(topic: string): Promise<boolean>;
}
