import { sql, type InsertQueryBuilder, type InsertResult, type Insertable } from 'kysely';
import type { Db, Tx } from './db.ts';
import type { Database } from './schema.ts';
import { markJobsAdded } from './writer.ts';

// SQLite binds at most 32,766 parameters per statement: many rows go in slices that stay under it.
const MAX_PARAMETERS = 32_000;

/**
 * What an insert does when it meets a row with the same key, for the tables that have a rule: the rollup's
 * increments add up. The one statement of it, used here and by the SQLite insert thread.
 */
export const ON_CONFLICT: Partial<Record<keyof Database, string>> = {
  email_metrics: 'on conflict (project_id, slot, metric, domain, broadcast_id) do update set count = email_metrics.count + excluded.count',
  tls_session_counts:
    'on conflict (day, domain, result, mx_host, receiving_ip) do update set count = tls_session_counts.count + excluded.count, reason = excluded.reason',
};

type Finish<T extends keyof Database> = (
  query: InsertQueryBuilder<Database, T, InsertResult>,
) => InsertQueryBuilder<Database, T, InsertResult>;

/**
 * Inserts rows in as few statements as the parameter limit allows, under the table's ON_CONFLICT rule;
 * `finish` may add an ON CONFLICT clause of its own.
 */
export async function insertRows<T extends keyof Database>(
  tx: Tx,
  table: T,
  rows: Insertable<Database[T]>[],
  finish: Finish<T> = withConflictRule(table),
): Promise<void> {
  if (rows.length === 0) return;
  // Blobs (attachments) can be megabytes each: one row per statement keeps statements small.
  const hasBlob = Object.values(rows[0]!).some((value) => Buffer.isBuffer(value));
  const perStatement = hasBlob ? 1 : Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length));
  for (let i = 0; i < rows.length; i += perStatement) {
    await finish(tx.insertInto(table).values(rows.slice(i, i + perStatement))).execute();
  }
}

function withConflictRule<T extends keyof Database>(table: T): Finish<T> {
  const rule = ON_CONFLICT[table];
  return rule === undefined ? (query) => query : (query) => query.modifyEnd(sql.raw(rule));
}

/** Rows of several tables, inserted in the order the tables are listed (parents before children). */
export type Rows = { [T in keyof Database]?: Insertable<Database[T]>[] };

/** Inserts rows table by table, each in as few statements as possible; jobs among them wake the workers once `tx` commits. */
export async function insertTables(tx: Tx, rows: Rows): Promise<void> {
  for (const [table, list] of Object.entries(rows) as [keyof Database, Insertable<Database[keyof Database]>[]][]) {
    await insertRows(tx, table, list);
  }
  if (rows.jobs && rows.jobs.length > 0) markJobsAdded(tx);
}

/** How many parameters inserting `rows` binds: each row's columns (rows of a table have the same columns). */
export const parameterCount = (rows: Rows) =>
  Object.values(rows).reduce((sum, list) => sum + (list.length > 0 ? list.length * Object.keys(list[0]!).length : 0), 0);

/** PostgreSQL binds at most 65,535 parameters per statement. */
export const MAX_POSTGRES_PARAMETERS = 60_000;

/**
 * PostgreSQL: rows of several tables in one statement, each table's insert a data-modifying WITH
 * clause: one round trip and no BEGIN or COMMIT, as a statement is atomic and its foreign keys are
 * checked at its end. Rows past the parameter limit go in a transaction, table by table.
 */
export async function insertInOneStatement(db: Db, rows: Rows): Promise<void> {
  const tables = (Object.entries(rows) as [keyof Database, Insertable<Database[keyof Database]>[]][]).filter(([, list]) => list.length > 0);
  if (parameterCount(rows) > MAX_POSTGRES_PARAMETERS) return db.transaction().execute((tx) => insertTables(tx, rows));
  if (tables.length === 0) return;
  const clauses = tables.map(([table, list], i) => sql`${sql.raw(`rows_${i}`)} as (${withConflictRule(table)(db.insertInto(table).values(list))})`);
  await sql`with ${sql.join(clauses)} select 1`.execute(db);
}
