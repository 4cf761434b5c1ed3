import { sql } from 'kysely';
import { isPostgres, type Db, type Tx } from './db.ts';

/** A destination's cut: the share of its rate it went down to at `pushed_at` (epoch ms). */
export interface Slowdown {
  destination: string;
  factor: number;
  pushed_at: number;
}

/** How the worker processes share destinations' slow-downs (delivery/throttle.ts) on PostgreSQL; undefined on SQLite. */
export interface SharedSlowdowns {
  /** Records `slowdown` unless another process recorded one for its destination within `everyMs` before it. */
  record(slowdown: Slowdown, everyMs: number): Promise<void>;
  /** The slow-downs recorded after `since`. */
  since(since: number): Promise<Slowdown[]>;
}

export function sharedSlowdowns(db: Db): SharedSlowdowns | undefined {
  if (!isPostgres(db)) return undefined;
  return {
    async record(slowdown, everyMs) {
      await db
        .insertInto('throttle_slowdowns')
        .values(slowdown)
        .onConflict((oc) =>
          oc
            .column('destination')
            .doUpdateSet({ factor: sql`excluded.factor`, pushed_at: sql`excluded.pushed_at` })
            .where('throttle_slowdowns.pushed_at', '<', slowdown.pushed_at - everyMs),
        )
        .execute();
    },
    since: (since) => db.selectFrom('throttle_slowdowns').selectAll().where('pushed_at', '>', since).execute(),
  };
}

/** Deletes up to `limit` slow-downs recorded before `before`. */
export async function deleteOldSlowdowns(db: Db | Tx, before: number, limit: number): Promise<number> {
  const old = db.selectFrom('throttle_slowdowns').select('destination').where('pushed_at', '<', before).limit(limit);
  const result = await db.deleteFrom('throttle_slowdowns').where('destination', 'in', old).executeTakeFirst();
  return Number(result.numDeletedRows);
}
