import type { Db } from './db.ts';

/** Records that worker `id` is alive at `now`: adds its row, or moves its heartbeat to `now`. */
export async function saveHeartbeat(db: Db, id: string, now: number): Promise<void> {
  await db
    .insertInto('workers')
    .values({ id, heartbeat_at: now })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now }))
    .execute();
}

/**
 * Deletes the rows of workers silent since before `before`. Their jobs are taken over with or without
 * the row; this only keeps crashed workers from piling up.
 */
export async function deleteStaleWorkers(db: Db, before: number): Promise<void> {
  await db.deleteFrom('workers').where('heartbeat_at', '<', before).execute();
}

/** Deletes a stopping worker's row: any job it still holds is taken over at once from then on. */
export async function deleteWorker(db: Db, id: string): Promise<void> {
  await db.deleteFrom('workers').where('id', '=', id).execute();
}
