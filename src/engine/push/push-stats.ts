/**
 * Push counters per topic and per destination origin, for `stats().push`: pushes sent,
 * acked (2xx), failed by class, deferred by the circuit breaker and deferred for lack of a
 * push slot (neither sent, nor an attempt spent). Counted since this process started. Origins past MAX_ORIGINS are counted
 * together under OTHER_ORIGINS, so tasks with their own urls cannot grow this without bound.
 */
import { dict } from '../../core/dict.js';
import type { CircuitBreakers, CircuitView } from '../../core/push-breaker.js';
import type { PushResultClass } from '../../core/push.js';

export type PushFailureClass = Exclude<PushResultClass, 'ok'>;

export interface PushCounts {
  /** Requests sent (a breaker's probe included). */
  readonly sent: number;
  /** Answered 2xx. */
  readonly ok: number;
  /** Failed attempts by why (`unsigned` and breaker-deferred pushes were not sent). */
  readonly failed: Readonly<Partial<Record<PushFailureClass, number>>>;
  /** Held back by an open circuit: given back uncounted, due again when a probe may go. */
  readonly deferred: number;
  /** Found no free push slot in time: given back uncounted, due again at once (its runAt unchanged). */
  readonly noSlot: number;
}

export interface PushOriginStats extends PushCounts {
  readonly breaker: CircuitView;
}

export interface PushStats {
  readonly topics: Readonly<Record<string, PushCounts>>;
  readonly origins: Readonly<Record<string, PushOriginStats>>;
}

export const MAX_ORIGINS = 1_000;
export const OTHER_ORIGINS = '(other origins)';

interface Counts {
  sent: number;
  ok: number;
  failed: Partial<Record<PushFailureClass, number>>;
  deferred: number;
  noSlot: number;
}

const zero = (): Counts => ({ sent: 0, ok: 0, failed: {}, deferred: 0, noSlot: 0 });

export class PushCounters {
  private readonly topics = new Map<string, Counts>();
  private readonly origins = new Map<string, Counts>();

  sent(topic: string, origin: string): void {
    this.of(topic, origin, (c) => c.sent++);
  }

  result(topic: string, origin: string, result: PushResultClass): void {
    this.of(topic, origin, (c) => {
      if (result === 'ok') c.ok++;
      else c.failed[result] = (c.failed[result] ?? 0) + 1;
    });
  }

  deferred(topic: string, origin: string): void {
    this.of(topic, origin, (c) => c.deferred++);
  }

  noSlot(topic: string, origin: string): void {
    this.of(topic, origin, (c) => c.noSlot++);
  }

  snapshot(breakers: CircuitBreakers, now: number): PushStats {
    const topics = dict<PushCounts>();
    for (const [topic, c] of this.topics) topics[topic] = copy(c);
    const origins = dict<PushOriginStats>();
    for (const [origin, c] of this.origins) origins[origin] = { ...copy(c), breaker: breakers.view(origin, now) };
    // An origin with a failure run that no push of this process counted (not possible today) still shows.
    for (const origin of breakers.origins()) origins[origin] ??= { ...zero(), breaker: breakers.view(origin, now) };
    return { topics, origins };
  }

  private of(topic: string, origin: string, count: (c: Counts) => void): void {
    let t = this.topics.get(topic);
    if (t === undefined) this.topics.set(topic, (t = zero()));
    const key = this.origins.has(origin) || this.origins.size < MAX_ORIGINS ? origin : OTHER_ORIGINS;
    let o = this.origins.get(key);
    if (o === undefined) this.origins.set(key, (o = zero()));
    count(t);
    count(o);
  }
}

function copy(c: Counts): PushCounts {
  return { sent: c.sent, ok: c.ok, failed: { ...c.failed }, deferred: c.deferred, noSlot: c.noSlot };
}
