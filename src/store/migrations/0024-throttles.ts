import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// On PostgreSQL the worker processes share each destination's outbound rate (delivery/throttle.ts):
// throttle_windows holds what they took of its current window, throttle_slowdowns the rate it was
// cut to when it last pushed back. Both are unlogged, as rate_limit_windows: a crash loses a window's
// counts and forgets a slow-down. SQLite processes count in memory and leave them empty.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  let windows = db.schema.createTable('throttle_windows');
  let slowdowns = db.schema.createTable('throttle_slowdowns');
  if (pg) [windows, slowdowns] = [windows.modifyFront(sql`unlogged`), slowdowns.modifyFront(sql`unlogged`)];
  await windows
    .addColumn('destination', 'text', (c) => c.primaryKey())
    .addColumn('window_start', 'bigint', (c) => c.notNull())
    .addColumn('taken', 'bigint', (c) => c.notNull())
    .execute();
  await slowdowns
    .addColumn('destination', 'text', (c) => c.primaryKey())
    .addColumn('factor', pg ? 'double precision' : 'real', (c) => c.notNull())
    .addColumn('pushed_at', 'bigint', (c) => c.notNull())
    .execute();
}
