/** The HTTP API's push subscription bodies (docs/push.md); re-exported by types.ts. */

/** PUT /v1/topics/:topic/push: create or replace the topic's push subscription (docs/push.md). */
export interface PushSubscriptionRequest {
  /** http or https; refused (INVALID_URL) when the SSRF rules refuse the destination. */
  url: string;
  /** `whsec_` + base64 of 24 to 64 bytes. Omitted: the current one is kept, or one is generated. */
  secret?: string;
  /** Default 10000, 1 to 60000. */
  timeoutMs?: number;
  /** Pushes of this topic in flight at once, per server. Default 16, 1 to 1000. */
  concurrency?: number;
  /** Extra request headers (not content-type, host, content-length, webhook-*, delayq-*). */
  headers?: Record<string, string>;
}

export interface PushSecretView {
  /** Masked: `whsec_` and the first 4 characters, then `…`. */
  secret: string;
  /** null for the current secret; an old one signs too until then. */
  expiresAt: number | null;
}

export interface PushSubscriptionView {
  topic: string;
  url: string;
  secrets: PushSecretView[];
  timeoutMs: number;
  concurrency: number;
  headers: Record<string, string>;
  createdAt: number;
  updatedAt: number;
}

export interface PushSubscriptionResponse {
  subscription: PushSubscriptionView;
  /** The full secret, only when the request gave one or one was generated: shown this once. */
  secret?: string;
}

/** GET /v1/push?limit=&after=: a page of subscriptions by topic. */
export interface PushListResponse {
  subscriptions: PushSubscriptionView[];
  /** Pass as `after` for the next page; null when this page was the last. */
  next: string | null;
}

export interface PushDeleteResponse {
  deleted: true;
}
