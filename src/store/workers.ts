import type { Db } from './db.ts';

/** Records that worker `id` is alive at `now`, and why its delivery is paused if it is: adds its row, or updates it. */
export async function saveHeartbeat(db: Db, id: string, now: number, deliveryPaused: string | null): Promise<void> {
  await db
    .insertInto('workers')
    .values({ id, heartbeat_at: now, delivery_paused: deliveryPaused })
    .onConflict((oc) => oc.column('id').doUpdateSet({ heartbeat_at: now, delivery_paused: deliveryPaused }))
    .execute();
}

/** Why delivery is paused, as the live workers (heartbeat since `since`) say, one line each; empty when it is not. */
export async function findDeliveryPauses(db: Db, since: number): Promise<string[]> {
  const rows = await db
    .selectFrom('workers')
    .select('delivery_paused')
    .distinct()
    .where('heartbeat_at', '>=', since)
    .where('delivery_paused', 'is not', null)
    .execute();
  return rows.map((row) => row.delivery_paused!);
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
