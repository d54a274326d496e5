/**
 * The one LISTEN connection of a process (outside the pool: a pooled client would be handed
 * to queries; with `listenUrl`, a direct connection while the pool goes through pgbouncer).
 * It hears the schema's channels (channels.ts) and hands each notification on. When the
 * connection fails it reconnects by itself, every RECONNECT_MS, on the store's clock;
 * notifications sent while it was away are lost, so `reconnected` runs once it listens again
 * (the store re-reads what they would have said).
 *
 * Whether notices reach it at all is found out, not assumed: a LISTEN through a transaction
 * pooler is made on a server connection the pooler then gives to others (pgbouncer closes it
 * at the first notice), and a listenUrl may name another database. So once it listens, the
 * process sends a probe, "owner nonce" on the probe channel, through its pool, the way every
 * other notice is sent: heard within PROBE_MS, notices arrive; not heard, `arriving(false)`
 * tells the store to poll instead (shared.ts), and the probe is sent again every REPROBE_MS
 * until one is heard (`arriving(true)`). Until the first answer the store counts on notices.
 *
 *   listening --probe heard--> arriving
 *       \--no answer in PROBE_MS--> not arriving (poll) --probe heard (every REPROBE_MS)--> arriving
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Clock, Logger, TimerToken } from '../../core/ports/index.js';
import type { Channels } from './channels.js';
import { createClient } from './connection.js';

const RECONNECT_MS = 500;
/** How long a probe may take to come back before notices are taken not to arrive. */
export const PROBE_MS = 2_000;
/** While notices do not arrive, a probe every this often (they may again: a pooler swapped for a direct connection). */
export const REPROBE_MS = 30_000;

export interface ListenerEvents {
  timers(payload: string): void;
  ready(lane: string): void;
  reconnected(): void;
  /** Sends a probe payload on the probe channel through the pool; a failure is a probe not heard. */
  probe(payload: string): Promise<unknown>;
  /** Whether notices reach this connection, each time that changes (the first answer included when it is no). */
  arriving(yes: boolean): void;
}

export class Listener {
  private client: pg.Client | null = null;
  private timer: TimerToken | null = null;
  private stopped = false;
  private failing = false;
  /** The probe awaited: its payload and its deadline's timer. */
  private probing: { readonly payload: string; readonly timer: TimerToken } | null = null;
  private reprobe: TimerToken | null = null;
  private arriving = true;

  constructor(
    private readonly connectionString: string,
    private readonly channels: Channels,
    private readonly owner: string,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly events: ListenerEvents,
  ) {}

  /** Listens before returning: a failure here fails the store's open. The probe's answer comes later. */
  async start(): Promise<void> {
    await this.connect();
    this.probe();
  }

  private async connect(): Promise<void> {
    const client = createClient(this.connectionString);
    client.on('notification', (message) => {
      if (message.payload === undefined) return;
      if (message.channel === this.channels.timers) this.events.timers(message.payload);
      else if (message.channel === this.channels.ready) this.events.ready(message.payload);
      else if (message.channel === this.channels.probe) this.heard(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channels.timers}"; LISTEN "${this.channels.ready}"; LISTEN "${this.channels.probe}"`);
    } catch (error) {
      client.removeAllListeners('end');
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.stopped) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
  }

  /** Sends a probe unless one is awaited; its answer is `heard`, or the deadline. */
  private probe(): void {
    if (this.stopped || this.probing !== null) return;
    const payload = `${this.owner} ${randomBytes(6).toString('base64url')}`;
    const timer = this.clock.setTimer(() => {
      if (this.probing?.payload !== payload) return;
      this.probing = null;
      this.setArriving(false);
      this.scheduleReprobe();
    }, PROBE_MS);
    this.probing = { payload, timer };
    // A probe that could not be sent is answered by its deadline.
    this.events.probe(payload).catch(() => undefined);
  }

  private heard(payload: string): void {
    // Other processes' probes come here too.
    if (this.probing?.payload !== payload) return;
    this.clock.clearTimer(this.probing.timer);
    this.probing = null;
    this.setArriving(true);
  }

  private scheduleReprobe(): void {
    if (this.stopped || this.reprobe !== null) return;
    this.reprobe = this.clock.setTimer(() => {
      this.reprobe = null;
      if (this.arriving) return;
      this.probe();
    }, REPROBE_MS);
  }

  private setArriving(yes: boolean): void {
    if (this.arriving === yes) return;
    this.arriving = yes;
    this.events.arriving(yes);
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.client !== client || this.stopped) return;
    this.client = null;
    if (!this.failing) this.logger.warn({ err: error }, 'postgres: the LISTEN connection was lost; reconnecting');
    this.failing = true;
    void client.end().catch(() => undefined);
    this.retry();
  }

  private retry(): void {
    if (this.stopped || this.timer !== null) return;
    this.timer = this.clock.setTimer(() => {
      this.timer = null;
      this.connect().then(
        () => {
          if (this.stopped) return;
          this.failing = false;
          this.logger.info({}, 'postgres: listening again');
          this.events.reconnected();
          this.probe();
        },
        () => this.retry(),
      );
    }, RECONNECT_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of [this.timer, this.reprobe, this.probing?.timer ?? null]) if (timer !== null) this.clock.clearTimer(timer);
    this.timer = null;
    this.reprobe = null;
    this.probing = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
