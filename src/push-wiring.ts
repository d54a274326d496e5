/**
 * The default push ports of a queue opened with `DelayQueue.open`: the undici transport
 * with its SSRF guard and the Standard Webhooks signer, both from src/push.
 *
 * TODO(lead, after merging push-transport): build them here, e.g.
 *   const transport = createPushTransport({ allow: options.allow ?? [], maxInFlight, logger: options.logger });
 *   const signer = { sign: signedHeaders, generateSecret };
 * Until then a queue opened without injected ports has no push delivery (setPush is refused).
 */
import type { Logger } from './core/ports.js';
import type { PushPorts, PushSigner, PushTransport } from './core/push.js';

/** The push part of DelayQueue.open's options. */
export interface PushOptions {
  /** The HTTP side; default: src/push's undici transport. */
  transport?: PushTransport;
  /** The signing side; default: src/push's Standard Webhooks signer. */
  signer?: PushSigner;
  /** CIDRs the SSRF guard lets through (local receivers): `--push-allow`, DELAYQ_PUSH_ALLOW. */
  allow?: readonly string[];
}

export interface DefaultPushContext {
  readonly allow: readonly string[];
  readonly logger: Logger | undefined;
}

/** The ports the queue pushes through: the given ones, else the defaults; undefined when there are none. */
export function resolvePushPorts(options: PushOptions | undefined, logger: Logger | undefined): PushPorts | undefined {
  const defaults = options?.transport !== undefined && options.signer !== undefined ? undefined : createDefaultPush({ allow: options?.allow ?? [], logger });
  const transport = options?.transport ?? defaults?.transport;
  const signer = options?.signer ?? defaults?.signer;
  return transport !== undefined && signer !== undefined ? { transport, signer } : undefined;
}

/** src/push's transport and signer (see the TODO above). */
export function createDefaultPush(context: DefaultPushContext): PushPorts | undefined {
  void context;
  return undefined;
}
