// PostgreSQL notification channels (LISTEN/NOTIFY): the SQL side of the event bus. A listening
// connection is a dedicated client (a pooled one would be handed to other queries).
import pg from 'pg';

const CHANNEL_RE = /^[a-z_][a-z0-9_]{0,62}$/;

export interface ListenHandlers {
  onMessage(channel: string, payload: string): void;
  /** The connection ended or failed; it will not deliver again (open a new one). */
  onLost(err: Error | null): void;
}

export class PgListenConnection {
  private lostCalled = false;

  private constructor(
    private readonly client: pg.Client,
    /** The server process of this connection (pg_stat_activity.pid). */
    readonly pid: number | null,
  ) {}

  static async open(
    connectionString: string,
    channels: readonly string[],
    applicationName: string,
    handlers: ListenHandlers,
  ): Promise<PgListenConnection> {
    for (const c of channels) if (!CHANNEL_RE.test(c)) throw new Error(`bad channel name ${c}`);
    const client = new pg.Client({ connectionString, application_name: applicationName });
    let conn: PgListenConnection | null = null;
    const lost = (err: Error | null) => {
      if (!conn || conn.lostCalled) return;
      conn.lostCalled = true;
      handlers.onLost(err);
    };
    client.on('notification', (msg) => {
      if (msg.payload) handlers.onMessage(msg.channel, msg.payload);
    });
    client.on('error', (err) => lost(err));
    client.on('end', () => lost(null));
    try {
      await client.connect();
      for (const c of channels) await client.query(`LISTEN ${c}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    conn = new PgListenConnection(client, (client as unknown as { processID?: number }).processID ?? null);
    return conn;
  }

  async close(): Promise<void> {
    this.lostCalled = true;
    await this.client.end().catch(() => undefined);
  }
}

export async function pgNotify(pool: pg.Pool, channel: string, payload: string): Promise<void> {
  await pool.query('select pg_notify($1, $2)', [channel, payload]);
}
