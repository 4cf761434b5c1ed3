import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db.ts';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// A key may have its own request rate (null: MAILROOM_RATE_LIMIT). On PostgreSQL the API processes
// share each key's budget through rate_limit_windows: one row per key, for the current one-second
// window. It is unlogged there: a crash that loses it loses a second's counts, and its updates, several
// a second, write no WAL. SQLite processes count in memory and leave the table empty.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('api_keys').addColumn('rate_limit', 'integer').execute();
  let table = db.schema.createTable('rate_limit_windows');
  if (isPostgres(db)) table = table.modifyFront(sql`unlogged`);
  await table
    .addColumn('api_key_id', t.id, (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('taken', 'bigint', (c) => c.notNull())
    .execute();
}
