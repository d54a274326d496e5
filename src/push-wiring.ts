/**
 * The default push ports of a queue opened with `DelayQueue.open`: src/push's undici
 * transport, with its SSRF guard, and its Standard Webhooks signer. A caller may inject either (tests inject both). The transport loads
 * undici at the first push (push/lazy-transport.ts), not when delayq is imported.
 */
import type { Clock, Logger } from './core/ports/index.js';
import type { PushPorts, PushSigner, PushTransport } from './core/push.js';
import { generateSecret, signedHeaders, webhookIdOf } from './push/signature.js';
import { createLazyPushTransport } from './push/lazy-transport.js';

/** The push part of DelayQueue.open's options. */
export interface PushOptions {
  /** The HTTP side; default: src/push's undici transport. */
  transport?: PushTransport;
  /** The signing side; default: src/push's Standard Webhooks signer. */
  signer?: PushSigner;
  /**
   * Addresses or CIDRs, each with an optional port, the SSRF guard lets through (local
   * receivers: `127.0.0.1:8080`, `[::1]:9000`, `10.0.0.0/8`): `--push-allow`, DELAYQ_PUSH_ALLOW.
   */
  allow?: readonly string[];
  /**
   * Pushes in flight at once in this process, shared fairly between the pushed topics (the
   * engine's `pushMaxInFlight`, docs/push.md "Slots"). Default 256.
   */
  maxInFlight?: number;
}

/** Signs with the task id as the webhook-id, `.` written `%2E` (the spec forbids `.` there). */
export const standardWebhooksSigner: PushSigner = {
  sign: (input) => signedHeaders({ ...input, id: webhookIdOf(input.id) }),
  generateSecret,
};

/** The ports the queue pushes through: the given ones, else src/push's. */
export function resolvePushPorts(options: PushOptions | undefined, logger: Logger | undefined, clock: Clock | undefined): PushPorts {
  const transport =
    options?.transport ??
    createLazyPushTransport({
      allow: options?.allow ?? [],
      ...(logger ? { logger } : {}),
      ...(clock ? { now: () => clock.now() } : {}),
    });
  return { transport, signer: options?.signer ?? standardWebhooksSigner };
}
