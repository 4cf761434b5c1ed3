import {
  type CompiledQuery,
  DeleteQueryNode,
  InsertQueryNode,
  UpdateQueryNode,
  type DatabaseConnection,
  type Driver,
  type KyselyPlugin,
  type OperationNode,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';
import type pg from 'pg';
import { inlineParameters } from './inline-parameters.ts';

// Write-behind transactions on PostgreSQL: a transaction's BEGIN, and the writes whose answer nobody
// reads, wait and go to the server in one message with the next statement that is read, or the COMMIT.
// A delivery's end (its job deleted, then a dozen rows written and raised) is two round trips, not ten.

/** The operation nodes of statements written through later(): no caller reads their answer. */
const deferrable = new WeakSet<OperationNode>();

const marking: KyselyPlugin = {
  transformQuery: ({ node }) => {
    // Reads, and writes that return rows, are sent when made.
    if (!((InsertQueryNode.is(node) || UpdateQueryNode.is(node) || DeleteQueryNode.is(node)) && !node.returning)) return node;
    const marked = { ...node };
    deferrable.add(marked);
    return Object.freeze(marked);
  },
  transformResult: async ({ result }) => result,
};

/**
 * `db` (a transaction) whose writes may wait for the transaction's next read or its commit, on
 * PostgreSQL: for inserts and updates whose result nobody reads. An error of one of them fails the
 * statement that carries it, and so the transaction, as it would have at once.
 */
export function later<D extends { withPlugin(plugin: KyselyPlugin): unknown }>(db: D): D {
  return db.withPlugin(marking) as D;
}

/** A statement's parameters past this are sent as parameters, in a round trip of its own. */
const MAX_INLINE_BYTES = 256 * 1024;

const inlineSize = (query: CompiledQuery) =>
  query.parameters.reduce<number>((sum, value) => sum + (typeof value === 'string' ? value.length : Buffer.isBuffer(value) ? value.length * 2 : 32), 0);

const resultOf = (result: pg.QueryResult): QueryResult<unknown> => ({
  numAffectedRows: ['INSERT', 'UPDATE', 'DELETE', 'MERGE'].includes(result.command) ? BigInt(result.rowCount ?? 0) : undefined,
  rows: result.rows ?? [],
});

/** A pooled client's connection: statements waiting to be sent, while a transaction is open. */
class WriteBehindConnection implements DatabaseConnection {
  /** SQL texts with their parameters written in, in order; the first may be the transaction's BEGIN. */
  private waiting: string[] = [];
  /** Whether the transaction's BEGIN reached the server. */
  private begun = false;
  private open = false;

  constructor(readonly client: pg.PoolClient) {}

  begin(settings: TransactionSettings): void {
    let begin = 'begin';
    if (settings.isolationLevel || settings.accessMode) {
      begin = ['start transaction', settings.isolationLevel && `isolation level ${settings.isolationLevel}`, settings.accessMode].filter(Boolean).join(' ');
    }
    this.waiting = [begin];
    this.begun = false;
    this.open = true;
  }

  async end(statement: 'commit' | 'rollback'): Promise<void> {
    const waiting = this.waiting;
    this.waiting = [];
    this.open = false;
    // Nothing reached the server: there is nothing to commit or roll back.
    if (!this.begun && (statement === 'rollback' || waiting.length <= 1)) return;
    // A commit whose statements fail leaves the transaction open on the server: Kysely's rollback follows.
    this.begun = true;
    await this.client.query(statement === 'commit' ? [...waiting, 'commit'].join(';\n') : 'rollback');
    this.begun = false;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    const size = inlineSize(query);
    if (this.open && deferrable.has(query.query) && size <= MAX_INLINE_BYTES) {
      this.waiting.push(inlineParameters(query.sql, query.parameters));
      return { rows: [] };
    }
    if (this.waiting.length === 0) return resultOf(await this.client.query(query.sql, [...query.parameters])) as QueryResult<R>;
    const waiting = this.waiting;
    this.waiting = [];
    this.begun = this.open;
    if (size > MAX_INLINE_BYTES) {
      await this.client.query(waiting.join(';\n'));
      return resultOf(await this.client.query(query.sql, [...query.parameters])) as QueryResult<R>;
    }
    // Several statements in one message answer with a result each: this statement's is the last.
    const results = (await this.client.query([...waiting, inlineParameters(query.sql, query.parameters)].join(';\n'))) as unknown as pg.QueryResult[];
    return resultOf(results.at(-1)!) as QueryResult<R>;
  }

  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('streaming is not supported on this connection');
  }
}

/** Kysely's driver for a pg pool, with write-behind transactions; `pool` as PostgresDialect takes it. */
export class WriteBehindDriver implements Driver {
  private readonly connections = new WeakMap<pg.PoolClient, WriteBehindConnection>();

  constructor(private readonly pool: { connect(): Promise<pg.PoolClient>; end(): Promise<void> }) {}

  async init(): Promise<void> {}

  async acquireConnection(): Promise<DatabaseConnection> {
    const client = await this.pool.connect();
    let connection = this.connections.get(client);
    if (!connection) this.connections.set(client, (connection = new WriteBehindConnection(client)));
    return connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    (connection as WriteBehindConnection).begin(settings);
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as WriteBehindConnection).end('commit');
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return (connection as WriteBehindConnection).end('rollback');
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as WriteBehindConnection).client.release();
  }

  async destroy(): Promise<void> {
    await this.pool.end();
  }
}
