import { sql } from 'kysely';
import type { TakeFromWindow } from '../limits/window-budget.ts';
import { isPostgres, type Db, type Tx } from './db.ts';

/** The tables that share budgets between processes (window-budget.ts), and the column of their key. */
const KEYS = { rate_limit_windows: 'api_key_id', throttle_windows: 'destination' } as const;

/**
 * How processes share the budgets of `table`: through it on PostgreSQL; undefined on SQLite, whose one
 * process (or few, on one file) counts in memory. rate_limit_windows holds API keys' requests,
 * throttle_windows destinations' messages.
 */
export function sharedWindows(db: Db, table: keyof typeof KEYS = 'rate_limit_windows'): TakeFromWindow | undefined {
  return isPostgres(db) ? (key, windowStart, count) => takeFromWindow(db, table, key, windowStart, count) : undefined;
}

/**
 * Adds `count` to what the processes took of a key's budget in the window starting at `windowStart`,
 * starting the row over when the window is newer than the row's; returns the window's total, this
 * count included. It always adds the whole count, even past the limit, so that the total before it is
 * the answer minus `count`: the caller grants itself what of `count` fits under the limit, in one
 * statement and no transaction. A process whose clock lags adds to the newer window rather than
 * starting an older one over.
 */
async function takeFromWindow(db: Db, table: keyof typeof KEYS, key: string, windowStart: number, count: number): Promise<number> {
  const [start, taken] = [sql.ref(`${table}.window_start`), sql.ref(`${table}.taken`)];
  const { rows } = await sql<{ taken: number }>`
    insert into ${sql.table(table)} (${sql.ref(KEYS[table])}, window_start, taken) values (${key}, ${windowStart}, ${count})
    on conflict (${sql.ref(KEYS[table])}) do update set
      taken = case when ${start} >= excluded.window_start then ${taken} + excluded.taken else excluded.taken end,
      window_start = greatest(${start}, excluded.window_start)
    returning taken`.execute(db);
  return rows[0]!.taken;
}

/** Deletes up to `limit` rows of `table` whose window started before `before`: keys and destinations no longer in use. */
export async function deleteStaleWindows(db: Db | Tx, table: keyof typeof KEYS, before: number, limit: number): Promise<number> {
  const key = sql.ref(KEYS[table]);
  const result = await sql`
    delete from ${sql.table(table)}
    where ${key} in (select ${key} from ${sql.table(table)} where window_start < ${before} limit ${limit})`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}
