// A node-postgres query for the hot prepared statements that asks the server to describe its result
// only once per connection. node-postgres sends Describe with every run of a prepared statement, so
// the server sends, and the service parses, the row description again each time: for the 47-column
// authentication join that was a tenth of the service's CPU per request (docs/benchmarks.md). The
// columns of a named statement cannot change under it (PostgreSQL refuses: "cached plan must not
// change result type"), so the first description is kept with the connection and used again, with
// the value parsers and the empty row that pg derived from it (pg derives them on every execution:
// a type-parser lookup per column and a 47-key object, 5-7% of a request on PostgreSQL).
//
// This overrides two methods of pg's Query (pg is pinned in package.json; the integration tests run
// every hot read through this class on PostgreSQL).
import pg from 'pg';

interface Connection {
  bind(opts: Record<string, unknown>): void;
  close(opts: { type: string; name: string }): void;
  sync(): void;
}

interface FieldsMessage {
  readonly fields: readonly unknown[];
}

/** What pg's Result derives from a description (pg 8's Result.addFields). */
interface ResultInternals {
  fields: readonly unknown[];
  _parsers: unknown[] | undefined;
  _prebuiltEmptyResultObject: object | null;
}

interface Described extends FieldsMessage {
  readonly parsers: unknown[] | undefined;
  readonly emptyRow: object | null;
}

/** The internals of pg.Query used here (pg 8). */
interface QueryInternals {
  readonly name: string;
  readonly portal: string;
  readonly values: unknown[];
  readonly binary: boolean;
  readonly rows: number | undefined;
  readonly callback: unknown;
  _result: ResultInternals;
  _accumulateRows: unknown;
  listeners(event: 'row'): unknown[];
  hasBeenParsed(connection: Connection): boolean;
  prepare(connection: Connection): void;
  handleRowDescription(msg: FieldsMessage): void;
  handleError(err: unknown, connection: Connection): void;
  _getRows(connection: Connection, rows: number | undefined): void;
}

/** Each connection's descriptions of the named statements run on it. */
const described = new WeakMap<Connection, Map<string, Described>>();

const Base = pg.Query as unknown as new (config: pg.QueryConfig) => QueryInternals;
const prepareValue = (pg as unknown as { utils?: { prepareValue?: unknown } }).utils?.prepareValue;

class DescribedOnceQuery extends Base {
  private describedOn: Connection | undefined;

  override prepare(connection: Connection): void {
    this.describedOn = connection;
    const known = this.hasBeenParsed(connection) ? described.get(connection)?.get(this.name) : undefined;
    if (known === undefined || prepareValue === undefined) return super.prepare(connection);
    try {
      connection.bind({
        portal: this.portal,
        statement: this.name,
        values: this.values,
        binary: this.binary,
        valueMapper: prepareValue,
      });
    } catch (err) {
      connection.close({ type: 'S', name: this.name });
      connection.sync();
      this.handleError(err, connection);
      return;
    }
    // The same fields as the server would describe, before any row arrives: what pg's
    // handleRowDescription does, with what it derived from them the first time.
    const result = this._result;
    result.fields = known.fields;
    result._parsers = known.parsers;
    result._prebuiltEmptyResultObject = known.emptyRow;
    this._accumulateRows = this.callback || !this.listeners('row').length;
    this._getRows(connection, this.rows);
  }

  override handleRowDescription(msg: FieldsMessage): void {
    if (this.describedOn !== undefined) {
      let byName = described.get(this.describedOn);
      if (byName === undefined) described.set(this.describedOn, (byName = new Map()));
      super.handleRowDescription(msg);
      const { _parsers: parsers, _prebuiltEmptyResultObject: emptyRow } = this._result;
      byName.set(this.name, { fields: msg.fields, parsers, emptyRow });
      return;
    }
    super.handleRowDescription(msg);
  }
}

/**
 * Runs a named prepared statement on a connection of the pool; the server describes its result on its
 * first run on each connection only.
 */
export function runHotQuery<R>(pool: pg.Pool, name: string, text: string, values: unknown[]): Promise<R[]> {
  const query = new DescribedOnceQuery({ name, text, values });
  // pool.query takes any submittable (pg's types only describe the stream form): given no callback it
  // returns a promise of the result, as for a plain query.
  const run = pool.query.bind(pool) as unknown as (q: unknown) => Promise<pg.QueryResult>;
  return run(query).then((res) => res.rows as R[]);
}
