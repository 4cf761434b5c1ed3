import type { Logger } from 'pino';
import pg from 'pg';
import { sql } from 'kysely';
import type { Availability } from './availability.ts';
import { isPostgres, postgresOptions, type Db } from './db.ts';

// PostgreSQL's LISTEN/NOTIFY between the processes of one database: a process that committed jobs
// says so, and every worker hears it and claims at once, instead of at its next poll. A notice carries
// the schema, so that databases sharing a server (one schema each) do not wake each other. SQLite has
// no such thing: processes sharing a file find each other's jobs by polling (WORKER_POLL_MS).

const CHANNEL = 'mailroom_jobs';

/** Notices sent closer together than this are merged: one per interval at most, per process. */
const MERGE_MS = 5;

/**
 * After the listening connection fails, a new one is tried this much later, doubling up to the most
 * while the failures go on (polling covers the gap); at once when the database is seen back.
 */
const RECONNECT_MS = 1000;
const MAX_RECONNECT_MS = 30_000;

export interface JobNotices {
  /** Tells every process that jobs were committed (merged with others sent within a few ms). */
  announce(): void;
  /** Calls `heard` for each notice; the first listener opens the connection that listens. */
  listen(heard: () => void): () => void;
  close(): Promise<void>;
}

const none: JobNotices = { announce() {}, listen: () => () => {}, close: async () => {} };

export function createJobNotices(db: Db, databaseUrl: string, log: Logger, availability: Availability): JobNotices {
  if (!isPostgres(db)) return none;
  const listeners = new Set<() => void>();
  let sending: Promise<void> | undefined;
  let again = false;
  let closed = false;
  let client: pg.Client | undefined;
  let retry: NodeJS.Timeout | undefined;
  let retryMs = RECONNECT_MS;
  availability.onBack(() => {
    if (retry === undefined || closed || listeners.size === 0) return;
    retryMs = RECONNECT_MS;
    void connect();
  });

  async function send(): Promise<void> {
    try {
      do {
        again = false;
        await sql`select pg_notify(${CHANNEL}, current_schema())`.execute(db);
        await new Promise((resolve) => setTimeout(resolve, MERGE_MS));
      } while (again && !closed);
    } catch (error) {
      // The workers' polls still find the jobs; the database's outage is logged once, by availability.
      if (!availability.failed(error)) log.warn({ err: error }, 'could not notify the workers of other processes');
    } finally {
      sending = undefined;
    }
  }

  async function connect(): Promise<void> {
    clearTimeout(retry);
    retry = undefined;
    const connection = new pg.Client(postgresOptions(databaseUrl));
    const reconnect = (error: unknown) => {
      if (client !== connection) return;
      client = undefined;
      connection.end().catch(() => {});
      if (closed || listeners.size === 0) return;
      if (!availability.failed(error)) log.warn({ err: error }, `lost the connection that listens for jobs; trying again in ${retryMs} ms`);
      retry = setTimeout(() => void connect(), retryMs);
      retryMs = Math.min(retryMs * 2, MAX_RECONNECT_MS);
    };
    client = connection;
    connection.on('error', reconnect);
    connection.on('end', () => reconnect(new Error('connection ended')));
    try {
      await connection.connect();
      const schema = (await connection.query<{ schema: string }>('select current_schema() as schema')).rows[0]!.schema;
      connection.on('notification', (notice) => {
        if (notice.channel === CHANNEL && notice.payload === schema) listeners.forEach((heard) => heard());
      });
      await connection.query(`listen ${CHANNEL}`);
      retryMs = RECONNECT_MS;
      // Jobs committed while it was not listening are found by this first call.
      listeners.forEach((heard) => heard());
    } catch (error) {
      reconnect(error);
    }
  }

  async function disconnect(): Promise<void> {
    clearTimeout(retry);
    const connection = client;
    client = undefined;
    await connection?.end().catch(() => {});
  }

  return {
    announce() {
      if (closed) return;
      if (sending) again = true;
      else sending = send();
    },
    listen(heard) {
      listeners.add(heard);
      if (listeners.size === 1 && !client) void connect();
      return () => {
        listeners.delete(heard);
        if (listeners.size === 0) void disconnect();
      };
    },
    async close() {
      closed = true;
      listeners.clear();
      await Promise.all([sending, disconnect()]);
    },
  };
}
