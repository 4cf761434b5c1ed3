import type { InsertQueryBuilder, InsertResult, Insertable } from 'kysely';
import type { Tx } from './db.ts';
import type { Database } from './schema.ts';

// SQLite binds at most 32,766 parameters per statement: many rows go in slices that stay under it.
const MAX_PARAMETERS = 32_000;

type Finish<T extends keyof Database> = (
  query: InsertQueryBuilder<Database, T, InsertResult>,
) => InsertQueryBuilder<Database, T, InsertResult>;

/** Inserts rows in as few statements as the parameter limit allows; `finish` may add an ON CONFLICT clause. */
export async function insertRows<T extends keyof Database>(
  tx: Tx,
  table: T,
  rows: Insertable<Database[T]>[],
  finish: Finish<T> = (query) => query,
): Promise<void> {
  if (rows.length === 0) return;
  // Blobs (attachments) can be megabytes each: one row per statement keeps statements small.
  const hasBlob = Object.values(rows[0]!).some((value) => Buffer.isBuffer(value));
  const perStatement = hasBlob ? 1 : Math.max(1, Math.floor(MAX_PARAMETERS / Object.keys(rows[0]!).length));
  for (let i = 0; i < rows.length; i += perStatement) {
    await finish(tx.insertInto(table).values(rows.slice(i, i + perStatement) as any)).execute();
  }
}

/** Rows of several tables, inserted in the order the tables are listed (parents before children). */
export type Rows = { [T in keyof Database]?: Insertable<Database[T]>[] };

/** Inserts rows table by table, each in as few statements as possible. */
export async function insertTables(tx: Tx, rows: Rows): Promise<void> {
  for (const [table, list] of Object.entries(rows) as [keyof Database, Insertable<Database[keyof Database]>[]][]) {
    await insertRows(tx, table, list);
  }
}
