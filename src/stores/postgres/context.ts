/**
 * What every part of the PostgreSQL store shares: the pool, the schema, this process's
 * counter slot, and the two ways a part talks to the database: one statement (`query`) or
 * one transaction on one connection (`transaction`). Both turn driver errors into
 * STORE_UNAVAILABLE, and run a statement or transaction again when PostgreSQL rolled it
 * back whole for a deadlock or a serialization failure (nothing of it happened).
 */
import pg from 'pg';
import { isRetryable, isTimeout, operationError, withPoolClient, type Pool, type PoolClient } from './connection.js';
import { COUNTER_ROTATE_MS, COUNTER_SLOTS, SLOT_KINDS, type SlotKind } from './counters.js';
import { forSchema, statement, type StatementName } from './sql-files.js';

/** Runs of a statement or transaction that PostgreSQL rolled back for a deadlock. */
const RETRIES = 3;
/** Input rows from which `planned` sets the planner's costs (scratch runs, ADR 0053: a seq scan from 20 rows at 3,000 tasks, 50 at 10,000). */
export const PLANNED_FROM = 16;
/** The planner's setting for the statement after it in the same message (its implicit transaction). */
const PLANNED_SETTING = 'SET LOCAL random_page_cost = 1.1';

/**
 * `text` with each `$n` replaced by parameter n as a quoted literal (pg.escapeLiteral: `E'...'`
 * with quotes and backslashes escaped, whatever standard_conforming_strings says), for the
 * simple protocol, which takes no parameters. A literal is read as the type its place asks
 * for, as an untyped parameter is (`$2::bigint[]` becomes `'{1,2}'::bigint[]`). The template
 * is scanned once, so a `$1` inside a value is never replaced. Only strings, finite numbers,
 * booleans and null: the store's statements pass nothing else (arrays go as literals already).
 */
export function inlined(text: string, values: readonly unknown[]): string {
  return text.replace(/\$(\d+)/g, (_match, n: string) => {
    const value = values[Number(n) - 1];
    if (value === null || value === undefined) return 'NULL';
    if (typeof value === 'number' && !Number.isFinite(value)) throw new RangeError(`parameter $${n}: not a finite number`);
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') throw new TypeError(`parameter $${n}: a ${typeof value} cannot go inline`);
    return pg.escapeLiteral(String(value));
  });
}

export class PgContext {
  /** Statements and transactions run so far (tests and diagnostics: n calls, how many round trips). */
  sent = 0;
  private readonly texts = new Map<StatementName, string>();

  constructor(
    readonly pool: Pool,
    readonly schema: string,
    /** This process's rows in task_counts (counters.ts): its base, one of COUNTER_SLOTS. */
    private readonly slotBase: number,
    /** Shards of the schema (meta 'shards', fixed when it was created). */
    readonly shards: number,
    /** For error messages: the redacted URL and schema. */
    readonly where: string,
    /** The pool's statement timeout (connection.ts createPool), for error messages. */
    readonly callTimeoutMs = 0,
    /** The store's clock: the base moves on every COUNTER_ROTATE_MS by it (none: it stays). */
    private readonly clock: { now(): number } | null = null,
  ) {}

  /** A driver error as the store's (STORE_UNAVAILABLE), saying where. */
  failure(error: unknown): Error {
    return operationError(this.where, error, this.callTimeoutMs);
  }

  /**
   * The counter slot of this process's writes of one kind (counters.ts): reservations and
   * acks of one process run at once and move the same (topic, 'reserved') counter, so
   * each kind has a row of its own and neither waits for the other's commit. The base moves
   * to the next every COUNTER_ROTATE_MS (counters.ts says why); every process's moves at the
   * same time, so two processes on different bases stay on different ones.
   */
  slotOf(kind: SlotKind): number {
    const base = this.clock === null ? this.slotBase : (this.slotBase + Math.floor(this.clock.now() / COUNTER_ROTATE_MS)) % COUNTER_SLOTS;
    return base * SLOT_KINDS + (kind === 'reserve' ? 1 : kind === 'ack' ? 2 : 0);
  }

  /** The text of a statement of sql/ for this schema. */
  sql(name: StatementName): string {
    let text = this.texts.get(name);
    if (text === undefined) {
      text = forSchema(statement(name), this.schema);
      this.texts.set(name, text);
    }
    return text;
  }

  /** One statement, autocommitted: atomic by itself. Unnamed: planned for its values each time (connection.ts). */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    for (let attempt = 1; ; attempt++) {
      this.sent++;
      try {
        const result = await this.pool.query<R>({ text, values });
        return result.rows;
      } catch (error) {
        if (attempt < RETRIES && isRetryable(error)) continue;
        throw this.failure(error);
      }
    }
  }

  /**
   * A statement that joins `items` input rows to `tasks` (ack, reserve, cancel, extend by
   * id): with many, after `SET LOCAL random_page_cost = 1.1` in the same transaction, since
   * the rows it names are in memory (ADR 0048: with the default 4.0 the planner read a table
   * of 10,000 to 30,000 tasks whole for an ack of 200 instead of probing its key). Both go in
   * one simple-protocol message, which PostgreSQL runs as one implicit transaction: one round
   * trip, as the statement alone, and the setting is gone with it, lost to nobody and leaked
   * to nobody behind a transaction pooler (ADR 0053). The parameters go inline as literals
   * (`inlined`). With fewer than PLANNED_FROM rows the planner probes the key whatever the
   * setting, and the statement goes as it is.
   */
  async planned<R extends pg.QueryResultRow>(items: number, text: string, values: unknown[]): Promise<R[]> {
    if (items < PLANNED_FROM) return this.query<R>(text, values);
    for (let attempt = 1; ; attempt++) {
      this.sent++;
      try {
        // A message of two statements answers one result each.
        const results = (await this.pool.query(`${PLANNED_SETTING}; ${inlined(text, values)}`)) as unknown as pg.QueryResult<R>[];
        return results[1]!.rows;
      } catch (error) {
        if (attempt < RETRIES && isRetryable(error)) continue;
        throw this.failure(error);
      }
    }
  }

  /** `body` inside BEGIN ... COMMIT on one connection; rolled back if it throws. */
  async transaction<T>(body: (client: PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      this.sent++;
      try {
        return await withPoolClient(this.pool, async (client, discard) => {
          try {
            await client.query('BEGIN');
            const value = await body(client);
            await client.query('COMMIT');
            return value;
          } catch (error) {
            // A timed-out connection would hold ROLLBACK behind the statement it still runs;
            // withPoolClient drops it, which rolls back as surely.
            if (!isTimeout(error)) await client.query('ROLLBACK').catch(discard);
            throw error;
          }
        });
      } catch (error) {
        if (attempt < RETRIES && isRetryable(error)) continue;
        throw this.failure(error);
      }
    }
  }
}
