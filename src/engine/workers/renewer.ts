/**
 * Renewal of the reservations `work` handlers hold while they run (issue 46, ADR 0051): one
 * loop per queue, one timer, and one batched `store.extend` per round for every reservation
 * due for renewal in this process (the Pusher's too), never a call per task.
 *
 * Each reservation held (`Held`) is renewed once a third of its length is left (sooner when
 * the store is slow to answer: two of its round trips before the reservation would count as
 * lost, but never with more than half of it left), and with it every other one with at most
 * half of its length left, so reservations of the same length reserved at different times
 * share rounds: about one call per sixth of a ttr whatever the number held, and each
 * reservation renewed at most twice per length, however slow the store. The store extends a reservation only with its receipt and only while it
 * has not run out (decideExtend), so a renewal of a reservation that was lost fails and
 * never revives it. Time is this process's clock:
 *
 *   ttr 30 s, reserved at t = 0 (runs out at 30 s; lost at 29 s, LAPSE_MARGIN)
 *     t = 20 s: one extend for it and every held reservation with <= 15 s left
 *               -> extended to 50 s (its ttr timer here moves with it)
 *     the store refuses it (acked by hand, expired, taken over)  -> lost: signal aborts
 *     the call fails: again after min(storeRetryMs, a quarter of the time left)
 *     t = 29 s and still not extended (a frozen process, a store out of reach): lost
 *
 * A reservation is lost LAPSE_MARGIN before its end as this process counts it, so that the
 * handler has stopped before another process's expiry (on its own clock) hands the task
 * out again. The same round also ends handlers past their `timeoutMs`. A round answered
 * after a reservation was declared lost does not undo the loss: its handler was told.
 */
import { PartialBatchError } from '../../core/partial-batch.js';
import type { ExtendOutcome, ExtendRequest } from '../../core/ports/index.js';
import type { LoopContext } from '../loop-context.js';

/** A reservation of a running handler, as the Renewer keeps it (a worker's job). */
export interface Held {
  readonly id: string;
  readonly receipt: string;
  readonly topic: string;
  /** The length to renew with: the worker's ttrMs; undefined: the task's own. */
  readonly ttrMs: number | undefined;
  /** When the reservation runs out, as last made or extended. */
  until: number;
  /** How long it was made for (its ttr). */
  length: number;
  /** When the handler's time is up (timeoutMs after it started); Infinity for never. */
  readonly timeoutAt: number;
  /**
   * Its reservation is lost: the store refused to extend it, or it was not extended in time;
   * `at` is when it counts as lost (its lapse, for one not extended in time).
   */
  lost(why: 'refused' | 'lapsed', at: number): void;
  /** Its handler ran past timeoutAt. */
  timedOut(): void;
}

/** The share of a reservation's length left when it is renewed (or earlier, when the store is slow to answer: `lead`). */
const RENEW_AT_LEFT = 1 / 3;
/**
 * The most of its length a reservation may have left when a round takes it: its own renewal
 * (`lead`) or, for rounds to be shared, one sooner. A renewal extends to a whole length from
 * when it is sent, so no reservation is renewed more often than twice per length, however
 * slow the store: a slow store does not get more renewals to make (ADR 0056; with 0.9 a
 * store slowed by a load renewed each reservation up to ten times per length, which slowed
 * it further).
 */
const MAX_LEFT_AT_RENEWAL = 1 / 2;
/** The least time between two rounds, and before a failed one is made again. */
const MIN_ROUND_GAP_MS = 10;

/** How long before its end a reservation not extended counts as lost: a tenth of it, at most 1 s. */
export function lapseMargin(length: number): number {
  return Math.min(1_000, length / 10);
}

/** When `held` counts as lost if it is not extended before. */
export function lapseAt(held: Pick<Held, 'until' | 'length'>): number {
  return held.until - lapseMargin(held.length);
}

export class Renewer {
  private readonly held = new Set<Held>();
  /** The same, by receipt: a ttr timer of this process that fires for one of them (`expiring`). */
  private readonly byReceipt = new Map<string, Held>();
  private readonly context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight' | 'tuning'>;
  /** A reservation was extended: the ttr timer this process holds for it moves, its flow slot too (LoopRunner.extended). */
  private readonly extended: (id: string, receipt: string, until: number, topic: string) => void;
  private timer: ReturnType<LoopContext['clock']['setTimer']> | null = null;
  private armedFor = Infinity;
  private inFlight = false;
  /** After a failed round, none before this. */
  private retryAfter = 0;
  private running = false;
  /** Store calls made (rounds), for the benchmark of what renewal costs. */
  calls = 0;
  /** How long the store took to answer a round (the last, or more while it was slower before): renewals are sent earlier when it is slow. */
  private roundTrip = 0;

  constructor(context: Pick<LoopContext, 'store' | 'clock' | 'logger' | 'inFlight' | 'tuning'>, { extended }: { extended: (id: string, receipt: string, until: number, topic: string) => void }) {
    this.context = context;
    this.extended = extended;
  }

  /** Reservations held now. */
  get size(): number {
    return this.held.size;
  }

  start(): void {
    this.running = true;
    this.arm();
  }

  /** No more rounds: reservations still held run out by themselves (the queue closes its workers first). */
  stop(): void {
    this.running = false;
    this.disarm();
    this.held.clear();
    this.byReceipt.clear();
  }

  hold(held: Held): void {
    this.held.add(held);
    this.byReceipt.set(held.receipt, held);
    const at = this.nextEventOf(held);
    if (at < this.armedFor) this.arm(at);
  }

  drop(held: Held): void {
    this.forget(held);
  }

  /**
   * This process's ttr timer for the reservation `receipt` fired, and the Expirer is about to
   * expire it: if a handler here holds it, it is lost first (its signal aborts before the
   * store hands the task out again), whatever this loop's own timer, which may run late on a
   * busy process, was about to do.
   */
  expiring(receipt: string): void {
    const held = this.byReceipt.get(receipt);
    if (held === undefined) return;
    this.forget(held);
    held.lost('lapsed', lapseAt(held));
  }

  private forget(held: Held): void {
    this.held.delete(held);
    if (this.byReceipt.get(held.receipt) === held) this.byReceipt.delete(held.receipt);
  }

  /**
   * How long before its end `held` is renewed: a third of its length, or, when the store is
   * slow to answer, enough for two of its round trips before the reservation counts as lost.
   */
  private lead(held: Held): number {
    return Math.min(held.length * MAX_LEFT_AT_RENEWAL, Math.max(held.length * RENEW_AT_LEFT, lapseMargin(held.length) + 2 * this.roundTrip));
  }

  /** The next time `held` needs the loop: its renewal, its loss, or its timeout. */
  private nextEventOf(held: Held): number {
    const renewal = this.inFlight ? Infinity : Math.max(this.retryAfter, held.until - this.lead(held));
    return Math.min(renewal, lapseAt(held), held.timeoutAt);
  }

  private arm(at?: number): void {
    if (!this.running) return;
    let next = at ?? Infinity;
    if (at === undefined) for (const held of this.held) next = Math.min(next, this.nextEventOf(held));
    if (next === Infinity) return this.disarm();
    if (this.timer !== null && next >= this.armedFor) return;
    this.disarm();
    const { clock } = this.context;
    this.armedFor = next;
    this.timer = clock.setTimer(() => {
      this.timer = null;
      this.armedFor = Infinity;
      this.round();
    }, Math.max(0, Math.min(2 ** 31 - 1, next - clock.now())));
  }

  private disarm(): void {
    if (this.timer !== null) this.context.clock.clearTimer(this.timer);
    this.timer = null;
    this.armedFor = Infinity;
  }

  /** Ends what is over (timeouts, lapses), then extends, in one call, what is due for renewal. */
  private round(): void {
    if (!this.running) return;
    const now = this.context.clock.now();
    const due: Held[] = [];
    for (const held of [...this.held]) {
      if (now >= held.timeoutAt) {
        this.forget(held);
        held.timedOut();
      } else if (now >= lapseAt(held)) {
        this.forget(held);
        held.lost('lapsed', lapseAt(held));
      } else if (!this.inFlight && now >= this.retryAfter && held.until - now <= held.length * MAX_LEFT_AT_RENEWAL) {
        due.push(held);
      }
    }
    if (due.length > 0) this.renew(due, now);
    this.arm();
  }

  private renew(due: readonly Held[], now: number): void {
    const { store, inFlight } = this.context;
    this.inFlight = true;
    this.calls++;
    const requests: ExtendRequest[] = due.map((held) => ({ id: held.id, receipt: held.receipt, ttrMs: held.ttrMs }));
    void inFlight
      .track(store.tasks.extend(requests, now))
      .then(
        (outcomes) => {
          // A slow answer counts at once, a fast one only little by little: rounds go early until the store is quick again.
          const took = this.context.clock.now() - now;
          this.roundTrip = Math.max(took, 0.7 * this.roundTrip + 0.3 * took);
          this.renewed(due, outcomes, now);
        },
        // A store cut into partitions may have extended some: those count, the rest go again.
        (error: unknown) => (error instanceof PartialBatchError ? this.renewed(due, (error as PartialBatchError<ExtendOutcome>).outcomes, now) : this.failed(due, error, now)),
      )
      .finally(() => {
        this.inFlight = false;
        this.arm();
      });
  }

  private renewed(due: readonly Held[], outcomes: readonly (ExtendOutcome | undefined)[], sentAt: number): void {
    const missing: Held[] = [];
    for (let i = 0; i < due.length; i++) {
      const held = due[i]!;
      const outcome = outcomes[i];
      // Dropped meanwhile (its handler ended, it timed out or lapsed): the answer changes nothing here.
      if (!this.held.has(held)) continue;
      if (outcome === undefined) missing.push(held);
      else if (outcome.status === 'extended') {
        held.length = outcome.reservedUntil - sentAt;
        held.until = outcome.reservedUntil;
        this.extended(held.id, held.receipt, outcome.reservedUntil, held.topic);
      } else {
        this.forget(held);
        held.lost('refused', this.context.clock.now());
      }
    }
    if (missing.length > 0) this.failed(missing, new Error('no answer for these reservations (a partition of the store failed)'), sentAt);
  }

  /** The store did not answer: these are asked again soon, before they run out if it comes back. */
  private failed(due: readonly Held[], error: unknown, sentAt: number): void {
    const { clock, logger, tuning } = this.context;
    const left = Math.min(...due.map((held) => lapseAt(held) - sentAt));
    this.retryAfter = clock.now() + Math.max(MIN_ROUND_GAP_MS, Math.min(tuning.storeRetryMs, left / 4));
    logger.warn({ err: error, reservations: due.length }, 'renewing reservations failed; asking again before they run out');
  }
}
