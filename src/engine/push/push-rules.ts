/**
 * The queue's push rules (docs/push.md): push subscriptions as the library manages them
 * (DelayQueue.setPush and friends), and the checks of tasks scheduled with their own url.
 *
 * A subscription is checked (core/push-input.ts, then the transport's SSRF check of its
 * URL), keeps or rotates its secrets, is stored, and the queue's Pusher applies the change
 * at once. Secrets leave here masked, except a secret the caller gave or one generated for
 * it, which `set` answers once. A task's own url must pass the same SSRF check and have a
 * secret to be signed with: its topic's subscription's, or the queue's default secret.
 */
import { DelayQError } from '../../core/errors.js';
import { isValidSecret, maskSubscription, rotateSecrets, validatePushInput } from '../../core/push-input.js';
import type { Clock, PushSubscriptionStore } from '../../core/ports/index.js';
import type { PushPorts, PushSubscription } from '../../core/push.js';
import type { NewTaskRecord } from '../../core/task/model.js';
import { validateIntOption, validateTopic, type Limits } from '../../core/task/validate.js';
import type { InFlight } from '../in-flight.js';
import type { LoopContext } from '../loop-context.js';

/** A page of push subscriptions (listPushPage): 100 by default, at most 1,000. */
export const DEFAULT_PUSH_PAGE = 100;
export const MAX_PUSH_PAGE = 1_000;

export interface PushPageOptions {
  /** The `next` of the previous page: subscriptions of topics after it. */
  readonly after?: string;
  readonly limit?: number;
}

export interface PushPage {
  readonly subscriptions: PushSubscription[];
  readonly next: string | null;
}

export interface PushRulesParams {
  /** Null when push is not configured: subscriptions can be read and deleted, not set, and no task may have a url. */
  readonly ports: PushPorts | null;
  /** The queue's default push secret, checked (checkDefaultSecret); null: none. */
  readonly defaultSecret: string | null;
  /** Applies the stored subscriptions to this process's pusher. */
  readonly applied: () => Promise<void>;
  readonly limits: Limits;
}

/** The queue's default push secret (EngineOptions.pushSecret), checked (INVALID_SECRET); null: none. */
export function checkDefaultSecret(secret: string | undefined): string | null {
  if (secret === undefined) return null;
  if (!isValidSecret(secret)) throw new DelayQError('INVALID_SECRET', 'pushSecret: must be whsec_ followed by the base64 of 24 to 64 bytes', { field: 'pushSecret' });
  return secret;
}

/** What `setPush` answers. */
export interface SetPushResult {
  /** The subscription as stored, its secrets masked (`whsec_abcd…`). */
  readonly subscription: PushSubscription;
  /** The full current secret, when the call gave one or had one generated: shown this once. */
  readonly secret?: string;
  /** false when the topic had a subscription, which this call replaced. */
  readonly created: boolean;
}

export class PushRules {
  private readonly store: PushSubscriptionStore;
  private readonly clock: Clock;
  private readonly inFlight: InFlight;
  readonly ports: PushPorts | null;
  /** Signs the pushes of tasks with their own url on a topic without a subscription; null: none. */
  readonly defaultSecret: string | null;
  private readonly applied: () => Promise<void>;
  private readonly limits: Limits;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'inFlight'>, { ports, defaultSecret, applied, limits }: PushRulesParams) {
    ({ store: { push: this.store }, clock: this.clock, inFlight: this.inFlight } = context);
    this.ports = ports;
    this.defaultSecret = defaultSecret;
    this.applied = applied;
    this.limits = limits;
  }

  /**
   * The checks of tasks with their own push url, before any is stored: push configured, the
   * url allowed by the SSRF rules (INVALID_URL), and a secret to sign with, the topic's
   * subscription or the queue's default (PUSH_NO_SECRET). With several tasks, the first
   * refused one's index is in `details.index`.
   */
  async checkTargets(records: readonly Pick<NewTaskRecord, 'topic' | 'url'>[]): Promise<void> {
    const checkedUrls = new Map<string, Promise<void>>();
    const subscribed = new Map<string, Promise<boolean>>();
    for (let index = 0; index < records.length; index++) {
      const { url, topic } = records[index]!;
      if (url === undefined) continue;
      try {
        if (this.ports === null) throw new DelayQError('INVALID_OPTION', 'url: this queue has no push transport configured', { field: 'url' });
        let checked = checkedUrls.get(url);
        if (checked === undefined) checkedUrls.set(url, (checked = this.ports.transport.checkUrl(url)));
        await checked;
        if (this.defaultSecret !== null) continue;
        let has = subscribed.get(topic);
        if (has === undefined) subscribed.set(topic, (has = this.inFlight.track(this.store.getPushSubscription(topic)).then((s) => s !== null)));
        if (!(await has))
          throw new DelayQError(
            'PUSH_NO_SECRET',
            `url: no secret to sign the push with: topic ${JSON.stringify(topic)} has no push subscription and the queue has no default push secret (pushSecret, --push-secret, DELAYQ_PUSH_SECRET)`,
            { field: 'url' },
          );
      } catch (error) {
        if (records.length > 1 && error instanceof DelayQError && error.details?.['index'] === undefined)
          throw new DelayQError(error.code, `tasks[${index}].${error.message}`, { ...error.details, index });
        throw error;
      }
    }
  }

  async set(topic: string, input: unknown): Promise<SetPushResult> {
    validateTopic(topic, this.limits);
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
    validateTopic(topic, this.limits);
    const subscription = await this.store.getPushSubscription(topic);
    return subscription === null ? null : maskSubscription(subscription);
  }

  async list(): Promise<PushSubscription[]> {
    return (await this.store.listPushSubscriptions()).map(maskSubscription);
  }

  /**
   * One page of the subscriptions by topic (GET /v1/push): those after `after`, at most
   * `limit` (default 100, at most MAX_PUSH_PAGE); `next` is the `after` of the next page,
   * null on the last. The store answers them all (the Pusher holds them all anyway).
   */
  async listPage(options: PushPageOptions): Promise<PushPage> {
    const after = options.after === undefined ? null : validateTopic(options.after, this.limits);
    const limit = options.limit === undefined ? DEFAULT_PUSH_PAGE : validateIntOption(options.limit, 'limit', 1, MAX_PUSH_PAGE);
    const sorted = (await this.store.listPushSubscriptions()).sort((a, b) => (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
    const rest = after === null ? sorted : sorted.filter((s) => s.topic > after);
    const page = rest.slice(0, limit);
    return { subscriptions: page.map(maskSubscription), next: rest.length > limit ? page.at(-1)!.topic : null };
  }

  async delete(topic: string): Promise<boolean> {
    validateTopic(topic, this.limits);
    const deleted = await this.inFlight.track(this.store.deletePushSubscription(topic));
    if (deleted) await this.applied();
    return deleted;
  }
}
