/**
 * What the chaos runner reads straight from a PostgreSQL store's schema, with a plain
 * node-postgres client of its own (never through delayq):
 *
 *   leases()        shard_leases: who owns each shard, until when (the takeover scenario
 *                   times the survivor's takeover by it)
 *   owed(ids)       how many of `ids` are still pending or reserved (the drain keeps waiting
 *                   for those), or null while the server cannot be read
 *   deadTuples()    the dead and live tuples of the schema's tables (pg_stat_user_tables,
 *                   which the server updates within about a second), or null while it cannot
 *                   be read: what the PostgreSQL cells report per phase
 *   standings(ids)  each offending task's row in words, for a broken round:
 *
 *     no row                      the acknowledged schedule is not in the store: a real loss
 *     completed, acked_receipt    delivered and acked: the delivery happened, its fact is missing
 *     pending / reserved, due     still owed: the drain ended before it came (or nothing fires it)
 */
import pg from 'pg';

export interface Lease {
  readonly shard: number;
  readonly owner: string | null;
  readonly expiresAt: number;
}

export interface PgTaskRow {
  readonly state: string;
  readonly run_at: number;
  readonly due_at: number | null;
  readonly attempts: number;
  readonly receipt: string | null;
  readonly acked_receipt: string | null;
  readonly reserved_until: number | null;
  readonly updated_at: number;
  readonly last_error: string | null;
  readonly shard: number;
}

export interface PgStanding {
  readonly id: string;
  readonly row: PgTaskRow | null;
  readonly reading: string;
}

const INT8_OID = 20;
const types = {
  getTypeParser: ((oid: number, format: 'text' | 'binary' = 'text'): unknown =>
    oid === INT8_OID ? (text: string) => Number(text) : (pg.types.getTypeParser(oid, format) as unknown)) as pg.CustomTypesConfig['getTypeParser'],
};

export class PgProbe {
  private client: pg.Client | null = null;

  constructor(
    private readonly url: string,
    private readonly schema: string,
  ) {}

  /** One connection, opened again after a failure (the server restarting). */
  private async connection(): Promise<pg.Client> {
    if (this.client !== null) return this.client;
    const client = new pg.Client({ connectionString: this.url, types, application_name: 'delayq-chaos', connectionTimeoutMillis: 5_000 });
    client.on('error', () => {
      if (this.client === client) this.client = null;
    });
    await client.connect();
    this.client = client;
    return client;
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    const client = await this.connection();
    try {
      return (await client.query<R>(text, values)).rows;
    } catch (error) {
      if (this.client === client) this.client = null;
      await client.end().catch(() => undefined);
      throw error;
    }
  }

  async leases(): Promise<Lease[]> {
    const rows = await this.query<{ shard: number; owner: string | null; expires_at: number }>(`SELECT shard, owner, expires_at FROM "${this.schema}".shard_leases ORDER BY shard`);
    return rows.map((r) => ({ shard: r.shard, owner: r.owner, expiresAt: r.expires_at }));
  }

  async owed(ids: readonly string[]): Promise<number | null> {
    try {
      const rows = await this.query<{ n: number }>(`SELECT count(*)::int AS n FROM "${this.schema}".tasks WHERE id = ANY($1::text[]) AND state IN ('pending', 'reserved')`, [ids]);
      return rows[0]?.n ?? 0;
    } catch {
      return null;
    }
  }

  async deadTuples(): Promise<{ dead: number; live: number; byTable: Record<string, number> } | null> {
    try {
      const rows = await this.query<{ relname: string; dead: number; live: number }>(
        'SELECT relname, n_dead_tup AS dead, n_live_tup AS live FROM pg_stat_user_tables WHERE schemaname = $1 ORDER BY relname',
        [this.schema],
      );
      const byTable: Record<string, number> = Object.create(null) as Record<string, number>;
      for (const r of rows) if (r.dead > 0) byTable[r.relname] = r.dead;
      return { dead: rows.reduce((n, r) => n + r.dead, 0), live: rows.reduce((n, r) => n + r.live, 0), byTable };
    } catch {
      return null;
    }
  }

  async standings(ids: readonly string[], checkedAt: number): Promise<PgStanding[]> {
    const rows = await this.query<PgTaskRow & { id: string }>(
      `SELECT id, state, run_at, due_at, coalesce(attempts, 0) AS attempts, receipt, acked_receipt, reserved_until, coalesce(updated_at, created_at) AS updated_at, last_error, shard FROM "${this.schema}".tasks WHERE id = ANY($1::text[])`,
      [ids],
    );
    const byId = new Map(rows.map(({ id, ...row }) => [id, row]));
    return ids.map((id) => {
      const row = byId.get(id) ?? null;
      return { id, row, reading: readRow(row, checkedAt) };
    });
  }

  async close(): Promise<void> {
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }
}

function readRow(row: PgTaskRow | null, checkedAt: number): string {
  if (row === null) return 'no row: the acknowledged schedule is not in the store (a real loss)';
  const ago = (at: number | null): string => (at === null ? '-' : at <= checkedAt ? `${checkedAt - at} ms before the check` : `${at - checkedAt} ms after the check`);
  switch (row.state) {
    case 'completed':
      return row.acked_receipt === null
        ? `completed without an acked receipt (updated ${ago(row.updated_at)})`
        : `completed by receipt ${row.acked_receipt} (attempt ${row.attempts}, acked ${ago(row.updated_at)}): delivered and acked, its delivery fact is missing`;
    case 'pending':
      return `pending in shard ${row.shard}, due ${ago(row.due_at)}, ${row.attempts} attempts so far: still owed`;
    case 'reserved':
      return `reserved in shard ${row.shard} (attempt ${row.attempts}, receipt ${row.receipt ?? '-'}) until ${ago(row.reserved_until)}: still owed`;
    default:
      return `${row.state} after ${row.attempts} attempts (${row.last_error ?? 'no error'}, ${ago(row.updated_at)})`;
  }
}
