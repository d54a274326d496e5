/**
 * One delivery a `work` handler runs (Job), and what the handler sees of it: its context
 * (`HandlerContext`: the signal, `ctx.ack`, `ctx.nack`) and its options. The signal is made
 * on first use and checks the reservation's end and the handler's timeout against the
 * clock whenever it is read (ADR 0051).
 */
import { DelayQError } from '../../core/errors.js';
import type { SqlTransaction } from '../../core/ports/index.js';
import type { Delivery } from '../../core/task/model.js';
import { MAX_HANDLER_TIMEOUT_MS } from '../../core/task/validate.js';
import type { NackOptions, NackResult } from '../queue-types.js';
import type { Held } from './renewer.js';

/** `ctx.ack`'s options. */
export interface HandlerAckOptions {
  /**
   * A transaction of yours, open on the store's database (the PostgreSQL store): the task is
   * completed if and only if it commits. Without it the task is acked at once.
   */
  tx?: SqlTransaction;
}

/** `ctx.nack`'s options: a nack's, and the transaction it goes in. */
export interface HandlerNackOptions extends NackOptions, HandlerAckOptions {}

/** What a handler gets besides its delivery. */
export interface HandlerContext {
  /**
   * Aborts when the handler should stop: its reservation was lost (the store refused to
   * renew it, or it was not renewed in time: a frozen process, the store out of reach;
   * RESERVATION_LOST), it ran past `timeoutMs` (HANDLER_TIMEOUT), or `worker.close({
   * timeoutMs })` stopped waiting for it (WORKER_CLOSED); `signal.reason` is that
   * DelayQError. Reading `signal.aborted` (or `throwIfAborted()`) checks the reservation's
   * end against the clock, so a process that was frozen past it sees the loss at once, before
   * its renewal timer has had a turn. Pass it on to fetch and the like.
   */
  readonly signal: AbortSignal;
  /**
   * Completes this delivery from the handler, so that the worker does not ack it again when
   * the handler returns. With `{ tx }` (the PostgreSQL store), inside that transaction of
   * yours: the work the handler wrote there and "the task is done" commit together or not
   * at all. Rolled back, the reservation stays as it was: it runs out at its ttr and the task
   * is delivered again, as the next attempt (the handler's reservation is no longer renewed
   * once it asked). STALE_RECEIPT when the reservation is no longer this delivery's. Another
   * store answers `{ tx }` with INVALID_ARGUMENT.
   */
  ack(options?: HandlerAckOptions): Promise<void>;
  /** Fails this delivery from the handler (retried after its backoff or `delayMs`, or dead), the same way; the worker then settles it no more. */
  nack(options?: HandlerNackOptions): Promise<NackResult>;
}

export type Handler<P = unknown> = (delivery: Delivery<P>, context: HandlerContext) => unknown;

/** A handler's time limit: one for every task, or one per task from its delivery (undefined: none). */
export type HandlerTimeout = number | ((delivery: Delivery) => number | undefined);

/** How a handler settles its own delivery (`ctx.ack`, `ctx.nack`): the queue's side of it. */
export interface HandlerSettlement {
  /** The handler acks its own delivery (`ctx.ack`): inside `tx` when given (the store's transactional role), else at once. */
  handlerAck(job: Job, tx: SqlTransaction | undefined): Promise<void>;
  /** The handler nacks its own delivery (`ctx.nack`), likewise. */
  handlerNack(job: Job, options: HandlerNackOptions): Promise<NackResult>;
}

/** What a Job asks of the worker that runs it (Worker). */
export interface JobOwner {
  readonly ttrMs: number | undefined;
  checkDeadlines(job: Job): void;
  lost(job: Job, why: 'refused' | 'lapsed', at: number): void;
  timedOut(job: Job): void;
  settleFromHandler<T>(job: Job, tx: SqlTransaction | undefined, settle: (source: HandlerSettlement) => Promise<T>): Promise<T>;
}

/**
 * One delivery a worker runs: its handler's context (the signal, made on first use), and its
 * reservation as the Renewer keeps it while the handler runs past its first turn.
 */
export class Job implements Held, HandlerContext {
  watched = false;
  done = false;
  /** Settled before its handler returned (it timed out, or close gave it back): the return settles nothing. */
  settledEarly = false;
  /** The handler settled it itself (`ctx.ack`, `ctx.nack`): at once (`now`), or in its transaction (`tx`, confirmed once it returns). */
  settledBy: 'now' | 'tx' | null = null;
  until: number;
  length: number;
  private controller: AbortController | null = null;
  private reason: DelayQError | null = null;

  constructor(
    readonly delivery: Delivery,
    private readonly worker: JobOwner,
    readonly timeoutAt: number,
    reservedAt: number,
  ) {
    this.until = delivery.reservedUntil;
    this.length = Math.max(1, delivery.reservedUntil - reservedAt);
  }

  get id(): string {
    return this.delivery.id;
  }

  get receipt(): string {
    return this.delivery.receipt;
  }

  get topic(): string {
    return this.delivery.topic;
  }

  get ttrMs(): number | undefined {
    return this.worker.ttrMs;
  }

  get signal(): AbortSignal {
    if (this.controller === null) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.reason !== null) controller.abort(this.reason);
      else exactSignal(controller.signal, () => this.worker.checkDeadlines(this));
    }
    return this.controller.signal;
  }

  /** Why the handler was told to stop, if it was. */
  get aborted(): DelayQError | null {
    return this.reason;
  }

  abort(reason: DelayQError): void {
    if (this.reason !== null) return;
    this.reason = reason;
    this.controller?.abort(reason);
  }

  lost(why: 'refused' | 'lapsed', at: number): void {
    this.worker.lost(this, why, at);
  }

  ack(options?: HandlerAckOptions): Promise<void> {
    return this.worker.settleFromHandler(this, options?.tx, (source) => source.handlerAck(this, options?.tx));
  }

  nack(options: HandlerNackOptions = {}): Promise<NackResult> {
    return this.worker.settleFromHandler(this, options.tx, (source) => source.handlerNack(this, options));
  }

  timedOut(): void {
    this.worker.timedOut(this);
  }
}

// The prototype's own, called with `this` set to each signal.
const throwIfAborted = Object.getOwnPropertyDescriptor(AbortSignal.prototype, 'throwIfAborted')!.value as () => void;

/**
 * Makes `signal.aborted` and `signal.throwIfAborted()` run `check` first: a handler that asks
 * learns of a deadline passed (its reservation's end, its timeout) at once, even when the
 * process was frozen past it and the loop's timers have not run yet (ADR 0051).
 */
function exactSignal(signal: AbortSignal, check: () => void): void {
  Object.defineProperty(signal, 'aborted', {
    configurable: true,
    get(): boolean {
      check();
      return Reflect.get<AbortSignal, 'aborted'>(AbortSignal.prototype, 'aborted', signal);
    },
  });
  Object.defineProperty(signal, 'throwIfAborted', {
    configurable: true,
    value(): void {
      check();
      Reflect.apply(throwIfAborted, signal, []);
    },
  });
}

/** A handler's time limit for `delivery`: the number, or the function's answer (Infinity for none); INVALID_OPTION when out of range. */
export function handlerTimeout(timeout: HandlerTimeout, delivery: Delivery): number {
  const ms = typeof timeout === 'number' ? timeout : timeout(delivery);
  if (ms === undefined) return Infinity;
  if (typeof ms !== 'number' || !Number.isInteger(ms) || ms < 1 || ms > MAX_HANDLER_TIMEOUT_MS)
    throw new DelayQError('INVALID_OPTION', `timeoutMs: must be an integer from 1 to ${MAX_HANDLER_TIMEOUT_MS} (got ${String(ms)} for ${delivery.id})`, { field: 'timeoutMs' });
  return ms;
}
