/**
 * The one LISTEN connection of a process (outside the pool: a pooled client would be handed
 * to queries). It hears the schema's channels (channels.ts) and hands each notification on.
 * When the connection fails it reconnects by itself, every RECONNECT_MS, on the store's
 * clock; notifications sent while it was away are lost, so `reconnected` runs once it
 * listens again (the store re-reads what they would have said).
 */
import type pg from 'pg';
import type { Clock, Logger, TimerToken } from '../../core/ports/index.js';
import type { Channels } from './channels.js';
import { createClient } from './connection.js';

const RECONNECT_MS = 500;

export interface ListenerEvents {
  timers(payload: string): void;
  ready(lane: string): void;
  reconnected(): void;
}

export class Listener {
  private client: pg.Client | null = null;
  private timer: TimerToken | null = null;
  private stopped = false;
  private failing = false;

  constructor(
    private readonly connectionString: string,
    private readonly channels: Channels,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly events: ListenerEvents,
  ) {}

  /** Listens before returning: a failure here fails the store's open. */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    const client = createClient(this.connectionString);
    client.on('notification', (message) => {
      if (message.payload === undefined) return;
      if (message.channel === this.channels.timers) this.events.timers(message.payload);
      else if (message.channel === this.channels.ready) this.events.ready(message.payload);
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, null));
    try {
      await client.connect();
      await client.query(`LISTEN "${this.channels.timers}"; LISTEN "${this.channels.ready}"`);
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
        },
        () => this.retry(),
      );
    }, RECONNECT_MS);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) this.clock.clearTimer(this.timer);
    this.timer = null;
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}
