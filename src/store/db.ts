import { closeSync, mkdirSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import SQLite from 'better-sqlite3';
import {
  Kysely,
  PostgresAdapter,
  PostgresDialect,
  SelectQueryNode,
  SqliteDialect,
  SqliteDriver,
  sql,
  type CompiledQuery,
  type DatabaseConnection,
  type LogEvent,
  type SqliteDatabase,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import type { Availability, Probe } from './availability.ts';
import type { Database } from './schema.ts';
import { WriteLock } from './sqlite/write-lock.ts';
import { WriteBehindDriver } from './postgres/write-behind.ts';

export { later } from './postgres/write-behind.ts';

export type Db = Kysely<Database>;
export type Tx = Transaction<Database>;

export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//.test(url);
}

/** True when db talks to PostgreSQL; the few dialect differences branch on this, inside store/ only. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the app's database and a migration's Kysely<any> alike
export function isPostgres(db: Kysely<any>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Resolves once the database answers a query: the health checks'. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

/** A unique or primary-key constraint refused a row (PostgreSQL 23505, SQLite SQLITE_CONSTRAINT_*). */
export function isUniqueViolation(error: unknown): boolean {
  const code = (error as { code?: string } | null)?.code;
  return code === '23505' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

const INT8_OID = 20;
const CACHED_STATEMENTS = 500;

/**
 * How long a query waits for a connection (the pool's, or a new one to a server that does not answer),
 * and for a query's answer: a hung server fails requests with 503 in seconds instead of holding them.
 * Generous for the answer: retention's and the reports' queries take seconds on large tables.
 */
const CONNECT_TIMEOUT_MS = 10_000;
const QUERY_TIMEOUT_MS = 30_000;

/** The options of every connection to PostgreSQL: the timeouts above, and TCP keep-alive to notice a peer gone silent. */
export function postgresOptions(url: string): pg.ClientConfig {
  return { connectionString: url, connectionTimeoutMillis: CONNECT_TIMEOUT_MS, query_timeout: QUERY_TIMEOUT_MS, keepAlive: true, keepAliveInitialDelayMillis: 10_000 };
}

/**
 * Whether the database takes writes now, for availability.ts to ask while it is down: PostgreSQL in
 * recovery (a standby, a failover under way) or read-only by default answers but refuses writes (25006).
 */
export function availabilityProbe(db: Db): Probe {
  if (!isPostgres(db)) return { run: () => ping(db), clears: ['unavailable'] };
  return {
    async run() {
      const { rows } = await sql<{ writable: boolean }>`select not pg_is_in_recovery() and current_setting('transaction_read_only') = 'off' as writable`.execute(db);
      if (!rows[0]!.writable) throw Object.assign(new Error('the database is in recovery or read-only'), { code: '25006' });
    },
    clears: ['unavailable', 'read_only'],
  };
}

/**
 * Kysely prepares every query anew and better-sqlite3 compiles SQL on each prepare(): keep the
 * compiled statements of the most recent queries (an LRU keyed by SQL text) and reuse them.
 */
function withStatementCache(sqlite: SQLite.Database): SqliteDatabase {
  const cache = new Map<string, SQLite.Statement>();
  return {
    close: () => sqlite.close(),
    prepare(sql) {
      // incremental_vacuum frees one page per step, and better-sqlite3's run() steps once: exec steps to the end.
      if (sql.startsWith('pragma incremental_vacuum')) return { reader: false, all: () => [], iterate: () => [][Symbol.iterator](), run: () => (sqlite.exec(sql), { changes: 0, lastInsertRowid: 0 }) };
      let statement = cache.get(sql);
      if (statement) {
        cache.delete(sql);
      } else {
        statement = sqlite.prepare(sql);
        if (cache.size >= CACHED_STATEMENTS) cache.delete(cache.keys().next().value!);
      }
      cache.set(sql, statement);
      return statement;
    },
  };
}

/**
 * SQLite's driver with the process's write lock (write-lock.ts) taken around every write: for the whole
 * of a transaction, and for each statement outside one that is not a SELECT. Reads outside a
 * transaction need no lock: WAL readers never wait for the writer.
 */
class LockedSqliteDriver extends SqliteDriver {
  private inTransaction = false;
  private wrapped: DatabaseConnection | undefined;

  constructor(
    database: SqliteDatabase,
    private readonly lock: WriteLock,
    private readonly sqlite: SQLite.Database,
  ) {
    super({ database });
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const connection = await super.acquireConnection();
    this.wrapped ??= {
      executeQuery: async <R>(query: CompiledQuery) => {
        if (this.inTransaction || SelectQueryNode.is(query.query)) return connection.executeQuery<R>(query);
        await this.lock.acquire();
        try {
          return await connection.executeQuery<R>(query);
        } finally {
          this.lock.release();
        }
      },
      streamQuery: (query, chunkSize) => connection.streamQuery(query, chunkSize),
    };
    return this.wrapped;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await this.lock.acquire();
    this.inTransaction = true;
    try {
      await super.beginTransaction(connection);
    } catch (error) {
      this.endTransaction();
      throw error;
    }
  }

  // A failed commit is followed by Kysely's rollback, which ends the transaction.
  override async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await super.commitTransaction(connection);
    this.endTransaction();
  }

  // SQLite ends a transaction by itself on some errors (SQLITE_FULL, SQLITE_IOERR): a ROLLBACK then
  // would fail, and its error would hide the one that says what happened.
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    try {
      if (this.sqlite.inTransaction) await super.rollbackTransaction(connection);
    } finally {
      this.endTransaction();
    }
  }

  private endTransaction(): void {
    this.inTransaction = false;
    this.lock.release();
  }
}

const writeLocks = new WeakMap<Db, WriteLock>();

/** The write lock of a SQLite database opened by openDb, to share with the insert thread's connection. */
export function writeLockOf(db: Db): WriteLock | undefined {
  return writeLocks.get(db);
}

/** A connection to a SQLite file (or :memory:), set up as every Mailroom connection is. */
export function openSqlite(url: string): SQLite.Database {
  if (url !== ':memory:') {
    // Mail, keys and contacts are in here: only the owner may read them. SQLite gives the WAL and
    // shared-memory files the database file's permissions, so creating that file 0600 covers all three.
    mkdirSync(dirname(url), { recursive: true, mode: 0o700 });
    closeSync(openSync(url, 'a', 0o600));
  }
  const sqlite = new SQLite(url);
  // Retention frees pages in batches, and hands them back to the file system (store/retention.ts)
  // only in this mode. It takes effect on a new file, before its first table; an existing file keeps
  // its mode until a VACUUM (docs/operations.md).
  sqlite.pragma('auto_vacuum = INCREMENTAL');
  // WAL lets readers run beside the one writer. synchronous=NORMAL: a commit writes the WAL without
  // waiting for the disk; the writers (writer.ts, insert-thread.ts) then fsync the WAL away from the
  // event loop before they answer, so what is acknowledged survives a power cut, and the fsync never
  // blocks requests.
  sqlite.pragma('journal_mode = WAL');
  sqlite.pragma('synchronous = NORMAL');
  // A page cache of up to 64 MB (in KiB when negative), not the default 2 MB: a delivery reads and writes
  // the index pages of six tables, which the default kept evicting (docs/decisions.md). Pages are
  // allocated as they are used.
  sqlite.pragma('cache_size = -65536');
  // Other processes (separate workers) may hold the write lock briefly: wait instead of failing.
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  return sqlite;
}

/**
 * A descriptor of a SQLite file's WAL, for the writers to fdatasync after they commit (synchronous=NORMAL
 * leaves that to them). SQLite has created the WAL by then (the database is open and migrated); 'a'
 * also accepts its absence.
 */
export function openWal(databaseFile: string): number {
  return openSync(`${databaseFile}-wal`, 'a');
}

/**
 * Opens the database named by url: a PostgreSQL pool for postgres:// URLs, else a SQLite file. Every
 * failed query, and every connection that breaks, is told to `availability` (the one place that
 * decides whether the database is down, and says so once).
 */
export function openDb(url: string, availability?: Availability): Db {
  const log = availability && ((event: LogEvent) => void (event.level === 'error' && availability.failed(event.error)));
  if (isPostgresUrl(url)) {
    const pool = new pg.Pool({
      ...postgresOptions(url),
      max: 10,
      // Epoch-millisecond columns are bigint; they fit a double, so read them as numbers.
      types: {
        getTypeParser: ((oid: number, format?: 'text' | 'binary'): unknown =>
          oid === INT8_OID ? Number : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
      },
    });
    // A connection that breaks (a restart, a terminated backend) emits 'error': idle, the pool drops it
    // and emits it again; in use, the query under way fails, and the next one takes another connection.
    // Without these listeners either would end the process.
    const broken = (error: Error) => void availability?.failed(error);
    pool.on('error', broken);
    pool.on('connect', (client) => client.on('error', broken));
    const connect = () =>
      pool.connect().catch((error: unknown) => {
        availability?.failed(error);
        throw error;
      });
    const driver = new WriteBehindDriver({ connect, end: () => pool.end() });
    const dialect = new (class extends PostgresDialect {
      override createDriver() {
        return driver;
      }
    })({ pool });
    return new Kysely<Database>({ dialect, log });
  }
  const lock = new WriteLock();
  const sqlite = openSqlite(url);
  const database = withStatementCache(sqlite);
  const db = new Kysely<Database>({
    dialect: new (class extends SqliteDialect {
      override createDriver() {
        return new LockedSqliteDriver(database, lock, sqlite);
      }
    })({ database }),
    log,
  });
  writeLocks.set(db, lock);
  return db;
}
