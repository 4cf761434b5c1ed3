import { sql } from 'kysely';
import { isPostgres, type Db } from './db.ts';

/** Adds `count` to a key's window starting at `windowStart` (epoch ms); answers the window's total, the count included. */
export type TakeFromWindow = (apiKeyId: string, windowStart: number, count: number) => Promise<number>;

/**
 * How the API processes share each key's budget: through this table on PostgreSQL; undefined on
 * SQLite, whose one process (or few, on one file) counts in memory.
 */
export function sharedWindows(db: Db): TakeFromWindow | undefined {
  return isPostgres(db) ? (apiKeyId, windowStart, count) => takeFromWindow(db, apiKeyId, windowStart, count) : undefined;
}

/**
 * Adds `count` to what the API processes took of a key's budget in the window starting at
 * `windowStart`, starting the row over when the window is newer than the row's; returns the window's
 * total, this count included. It always adds the whole count, even past the limit, so that the total
 * before it is the answer minus `count`: the caller grants itself what of `count` fits under the limit,
 * in one statement and no transaction. A process whose clock lags adds to the newer window rather than
 * starting an older one over.
 */
async function takeFromWindow(db: Db, apiKeyId: string, windowStart: number, count: number): Promise<number> {
  const row = await db
    .insertInto('rate_limit_windows')
    .values({ api_key_id: apiKeyId, window_start: windowStart, taken: count })
    .onConflict((oc) =>
      oc.column('api_key_id').doUpdateSet({
        taken: sql`case when rate_limit_windows.window_start >= excluded.window_start then rate_limit_windows.taken + excluded.taken else excluded.taken end`,
        window_start: sql`greatest(rate_limit_windows.window_start, excluded.window_start)`,
      }),
    )
    .returning('taken')
    .executeTakeFirstOrThrow();
  return row.taken;
}
