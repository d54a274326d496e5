/**
 * Push delivery's ports for engine tests: a transport that records each request and
 * answers from a script (at once, or when the test releases it), and a signer that signs
 * as Standard Webhooks says (HMAC-SHA256 of `id.timestamp.body` with the base64-decoded
 * secret). Time is the queue's ManualClock; nothing here sleeps.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { DelayQError } from '../../src/core/errors.js';
import type { PushRequest, PushResponse, PushSignInput, PushSigner, PushTransport } from '../../src/core/push.js';
import type { Clock } from '../../src/core/ports/index.js';
import { ManualClock } from '../../src/core/manual-clock.js';
import { DelayQueue, type DelayQueueOptions } from '../../src/open-queue.js';
import type { PushOptions } from '../../src/push-wiring.js';
import { T0, flush } from './engine.js';

export interface SentPush {
  readonly request: PushRequest;
  /** The queue's clock when the request was sent. */
  readonly at: number;
}

export const OK: PushResponse = { kind: 'response', status: 200, retryAfterMs: null, bodyStart: '' };

export function status(code: number, bodyStart = '', retryAfterMs: number | null = null): PushResponse {
  return { kind: 'response', status: code, retryAfterMs, bodyStart };
}

export class ScriptedTransport implements PushTransport {
  readonly sent: SentPush[] = [];
  /** Answers of requests the test holds (hold = true, or holdIf), in the order they were sent. */
  readonly held: ((response: PushResponse) => void)[] = [];
  /** The requests whose answers are in `held`, in the same order. */
  readonly heldRequests: PushRequest[] = [];
  /** Holds the requests it picks even with hold false: a receiver that never answers, for some urls only. */
  holdIf: ((request: PushRequest) => boolean) | null = null;
  /** Answers to give, one per request; then `fallback`. */
  readonly script: PushResponse[] = [];
  fallback: PushResponse = OK;
  hold = false;
  closed = false;

  constructor(private readonly clock: Clock) {}

  async checkUrl(url: string): Promise<void> {
    if (new URL(url).hostname === '10.0.0.1') throw new DelayQError('INVALID_URL', `url: refused destination 10.0.0.1: private`, { field: 'url' });
  }

  /** Every url `warm` was called with, in order. */
  readonly warmed: string[] = [];

  warm(url: string): void {
    this.warmed.push(url);
  }

  /** The signal each request was sent with, in the order sent. */
  readonly signals: (AbortSignal | undefined)[] = [];

  send(request: PushRequest, signal?: AbortSignal): Promise<PushResponse> {
    this.sent.push({ request, at: this.clock.now() });
    this.signals.push(signal);
    if (this.hold || this.holdIf?.(request) === true)
      return new Promise<PushResponse>((resolve) => {
        this.held.push(resolve);
        this.heldRequests.push(request);
      });
    return Promise.resolve(this.script.shift() ?? this.fallback);
  }

  /** Answers the oldest held request (to `url`, when given). */
  release(response: PushResponse = OK, url?: string): void {
    const at = url === undefined ? 0 : this.heldRequests.findIndex((request) => request.url === url);
    const answer = at < 0 ? undefined : this.held[at];
    if (answer === undefined) throw new Error(`no request${url === undefined ? '' : ` to ${url}`} is held`);
    this.held.splice(at, 1);
    this.heldRequests.splice(at, 1);
    answer(response);
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
  return `v1,${createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64')}`;
}

export const testSigner: PushSigner = {
  sign({ id, timestampSeconds, body, secrets }: PushSignInput) {
    return {
      'webhook-id': id,
      'webhook-timestamp': String(timestampSeconds),
      'webhook-signature': secrets.map((secret) => sign(secret, id, timestampSeconds, body)).join(' '),
    };
  },
  generateSecret: () => `whsec_${randomBytes(32).toString('base64')}`,
};

export function newSecret(): string {
  return testSigner.generateSecret();
}

/**
 * A queue on a ManualClock at T0 whose pushes go to a ScriptedTransport, signed by
 * testSigner; `options` adds to or replaces the defaults (store 'memory', random 0.5);
 * `push` adds push options (maxInFlight).
 */
export async function openPushing(
  options: Omit<DelayQueueOptions, 'clock' | 'push'> = {},
  push: Pick<PushOptions, 'maxInFlight'> = {},
): Promise<{ q: DelayQueue; clock: ManualClock; transport: ScriptedTransport }> {
  const clock = new ManualClock(T0);
  const transport = new ScriptedTransport(clock);
  const q = await DelayQueue.open({ store: 'memory', random: () => 0.5, ...options, clock, push: { ...push, transport, signer: testSigner } });
  await flush();
  return { q, clock, transport };
}
