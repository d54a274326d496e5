/**
 * Push subscriptions as the library manages them (DelayQueue.setPush and friends): checks
 * a subscription (core/push-input.ts, then the transport's SSRF check of its URL), keeps
 * or rotates its secrets, stores it, and has the queue's Pusher apply the change at once.
 * Secrets leave here masked, except a secret the caller gave or one generated for it,
 * which `set` answers once.
 */
import { DelayQError } from '../core/errors.js';
import { maskSubscription, rotateSecrets, validatePushInput } from '../core/push-input.js';
import type { Clock, PushSubscriptionStore } from '../core/ports/index.js';
import type { PushPorts, PushSubscription } from '../core/push.js';
import type { InFlight } from './in-flight.js';

/** What `setPush` answers. */
export interface SetPushResult {
  /** The subscription as stored, its secrets masked (`whsec_abcd…`). */
  readonly subscription: PushSubscription;
  /** The full current secret, when the call gave one or had one generated: shown this once. */
  readonly secret?: string;
  /** false when the topic had a subscription, which this call replaced. */
  readonly created: boolean;
}

export class PushSubscriptions {
  constructor(
    private readonly store: PushSubscriptionStore,
    /** Null when push is not configured: subscriptions can be read and deleted, not set. */
    private readonly ports: PushPorts | null,
    private readonly clock: Clock,
    private readonly inFlight: InFlight,
    /** Applies the stored subscriptions to this process's pusher. */
    private readonly applied: () => Promise<void>,
  ) {}

  async set(topic: string, input: unknown): Promise<SetPushResult> {
    const checked = validatePushInput(input);
    if (this.ports === null) throw new DelayQError('INVALID_OPTION', 'push: this queue has no push transport configured', { field: 'push' });
    await this.ports.transport.checkUrl(checked.url);
    const previous = await this.inFlight.track(this.store.getPushSubscription(topic));
    const now = this.clock.now();
    const given = checked.secret;
    const next = given ?? previous?.secrets.find((s) => s.expiresAt === null)?.secret ?? this.ports.signer.generateSecret();
    const shown = given ?? (previous === null ? next : undefined);
    const subscription: PushSubscription = {
      topic,
      url: checked.url,
      secrets: rotateSecrets(previous?.secrets ?? [], next, now),
      timeoutMs: checked.timeoutMs,
      concurrency: checked.concurrency,
      headers: checked.headers,
      createdAt: previous?.createdAt ?? now,
      updatedAt: now,
    };
    await this.inFlight.track(this.store.putPushSubscription(subscription));
    await this.applied();
    return { subscription: maskSubscription(subscription), ...(shown !== undefined ? { secret: shown } : {}), created: previous === null };
  }

  async get(topic: string): Promise<PushSubscription | null> {
    const subscription = await this.store.getPushSubscription(topic);
    return subscription === null ? null : maskSubscription(subscription);
  }

  async list(): Promise<PushSubscription[]> {
    return (await this.store.listPushSubscriptions()).map(maskSubscription);
  }

  async delete(topic: string): Promise<boolean> {
    const deleted = await this.inFlight.track(this.store.deletePushSubscription(topic));
    if (deleted) await this.applied();
    return deleted;
  }
}
