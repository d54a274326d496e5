/**
 * A push subscription as the durable stores keep it: one JSON text per topic (a SQLite
 * row, a Redis hash field), the topic itself being the key and not repeated inside. The
 * fields are written one by one, so nothing a caller hung on the object is stored; reading
 * checks every field, because the text comes from disk or from a Redis that other
 * processes (and other versions of delayq) write to.
 *
 * Unknown fields are ignored, so a subscription written by a later delayq with more
 * options still reads here; a text missing a field or with one of the wrong type reads as
 * null, and the store skips it with a warning rather than failing every read of every
 * topic (see the stores' listPushSubscriptions).
 */
import type { PushSecret, PushSubscription } from '../core/push.js';

export function encodePushSubscription(subscription: PushSubscription): string {
  const stored: Omit<PushSubscription, 'topic'> = {
    url: subscription.url,
    secrets: subscription.secrets.map((s): PushSecret => ({ secret: s.secret, expiresAt: s.expiresAt })),
    timeoutMs: subscription.timeoutMs,
    concurrency: subscription.concurrency,
    headers: { ...subscription.headers },
    createdAt: subscription.createdAt,
    updatedAt: subscription.updatedAt,
  };
  return JSON.stringify(stored);
}

/** The subscription of `topic` stored as `text`, or null when the text is not one. */
export function decodePushSubscription(topic: string, text: string): PushSubscription | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (!isRecord(value)) return null;
  const { url, secrets, timeoutMs, concurrency, headers, createdAt, updatedAt } = value;
  if (typeof url !== 'string' || !Array.isArray(secrets) || !isRecord(headers)) return null;
  if (!isFiniteNumber(timeoutMs) || !isFiniteNumber(concurrency) || !isFiniteNumber(createdAt) || !isFiniteNumber(updatedAt)) return null;
  const decodedSecrets: PushSecret[] = [];
  for (const entry of secrets as unknown[]) {
    if (!isRecord(entry)) return null;
    const { secret, expiresAt } = entry;
    if (typeof secret !== 'string' || !(expiresAt === null || isFiniteNumber(expiresAt))) return null;
    decodedSecrets.push({ secret, expiresAt });
  }
  const headerEntries = Object.entries(headers);
  if (!headerEntries.every((entry): entry is [string, string] => typeof entry[1] === 'string')) return null;
  // fromEntries, not assignment: a header named __proto__ stays a header.
  const decodedHeaders: Record<string, string> = Object.fromEntries(headerEntries);
  return { topic, url, secrets: decodedSecrets, timeoutMs, concurrency, headers: decodedHeaders, createdAt, updatedAt };
}

/** The port's order for listPushSubscriptions: by topic, as JavaScript compares strings (the memory store's order). */
export function byTopic(a: PushSubscription, b: PushSubscription): number {
  return a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isFiniteNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
