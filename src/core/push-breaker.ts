/**
 * The push circuit breaker, per destination origin (`https://host:port`): pure state, no
 * clock of its own (every call is given `now`), so it is tested with plain numbers.
 *
 *   closed ──failureThreshold consecutive failures──▶ open ──cooldownMs──▶ half-open
 *     ▲                                                 ▲                     │
 *     └──────────── the probe succeeds ─────────────────┼─────────────────────┤
 *                                                       └── the probe fails ──┘
 *
 * - closed: every push goes. A failure (connection error, timeout, 5xx: `breakerOutcome`)
 *   adds one to the run of consecutive failures, anything the origin answered otherwise
 *   (2xx, 3xx, 4xx, 429) ends the run.
 * - open: no push goes until `openUntil`; a held-back push is told to come back then.
 * - half-open (open, and openUntil has passed): exactly one push goes, the probe; the others
 *   are told to come back `probeWaitMs` later. The probe's success closes the circuit, its
 *   failure opens it for another cooldown. A probe that ended neutral (its push never
 *   reached the origin: refused by the SSRF rules, given up while queued) frees the slot
 *   for another probe.
 * - Outcomes of pushes admitted before the circuit opened change nothing once it is open:
 *   only the probe decides.
 *
 * The Pusher defers a held-back task (the store's `defer`: its attempt is not counted), so
 * an origin that is down costs its tasks time, not attempts (ADR 0022).
 */
import { ENGINE_OPTIONS, numberDefault } from './option-table/index.js';

export interface BreakerOptions {
  /** Consecutive failures that open a closed circuit. */
  readonly failureThreshold: number;
  /** How long an open circuit holds pushes back before a probe may go. */
  readonly cooldownMs: number;
  /** While the probe is out, the others come back this much later. */
  readonly probeWaitMs: number;
}

/** The defaults, from the options table (pushBreaker.*). */
export const BREAKER_DEFAULTS: BreakerOptions = {
  failureThreshold: ENGINE_OPTIONS['pushBreaker.failureThreshold'].default,
  cooldownMs: numberDefault(ENGINE_OPTIONS['pushBreaker.cooldownMs']),
  probeWaitMs: numberDefault(ENGINE_OPTIONS['pushBreaker.probeWaitMs']),
};

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What a push's result says about its origin. */
export type BreakerOutcome = 'success' | 'failure' | 'neutral';

export type Admission = { readonly admitted: true; readonly probe: boolean } | { readonly admitted: false; readonly retryAt: number };

export interface CircuitView {
  readonly state: BreakerState;
  /** The current run of consecutive failures (closed), or the run that opened it. */
  readonly consecutiveFailures: number;
  /** When an open circuit lets a probe go; null when closed. */
  readonly openUntil: number | null;
}

interface Circuit {
  state: BreakerState;
  failures: number;
  openUntil: number;
  /** Half-open: the probe is out. */
  probing: boolean;
}

const ADMITTED: Admission = { admitted: true, probe: false };
const PROBE: Admission = { admitted: true, probe: true };
const CLOSED: CircuitView = { state: 'closed', consecutiveFailures: 0, openUntil: null };

export class CircuitBreakers {
  /** Only origins with a failure run or not closed: a healthy origin costs no entry. */
  private readonly circuits = new Map<string, Circuit>();

  constructor(readonly options: BreakerOptions = BREAKER_DEFAULTS) {}

  /** May a push to `origin` go now? Admitting the probe marks it out. */
  admit(origin: string, now: number): Admission {
    const c = this.circuits.get(origin);
    if (c === undefined || c.state === 'closed') return ADMITTED;
    if (c.state === 'open') {
      if (now < c.openUntil) return { admitted: false, retryAt: c.openUntil };
      c.state = 'half-open';
      c.probing = false;
    }
    if (c.probing) return { admitted: false, retryAt: now + this.options.probeWaitMs };
    c.probing = true;
    return PROBE;
  }

  /** The result of a push `admit` let go (`probe` as it answered). */
  record(origin: string, outcome: BreakerOutcome, now: number, probe: boolean): void {
    const c = this.circuits.get(origin);
    if (probe) {
      if (c === undefined || c.state !== 'half-open' || !c.probing) return;
      c.probing = false;
      if (outcome === 'success') this.circuits.delete(origin);
      else if (outcome === 'failure') this.open(c, now);
      return;
    }
    if (outcome === 'neutral' || (c !== undefined && c.state !== 'closed')) return;
    if (outcome === 'success') {
      if (c !== undefined) this.circuits.delete(origin);
      return;
    }
    const circuit = c ?? { state: 'closed', failures: 0, openUntil: 0, probing: false };
    if (c === undefined) this.circuits.set(origin, circuit);
    circuit.failures++;
    if (circuit.failures >= this.options.failureThreshold) this.open(circuit, now);
  }

  view(origin: string, now: number): CircuitView {
    const c = this.circuits.get(origin);
    if (c === undefined) return CLOSED;
    const state = c.state === 'open' && now >= c.openUntil ? 'half-open' : c.state;
    return { state, consecutiveFailures: c.failures, openUntil: c.state === 'closed' ? null : c.openUntil };
  }

  /** Origins whose circuit is not closed, or closed with a failure run. */
  origins(): string[] {
    return [...this.circuits.keys()];
  }

  private open(c: Circuit, now: number): void {
    c.state = 'open';
    c.openUntil = now + this.options.cooldownMs;
    c.probing = false;
  }
}
