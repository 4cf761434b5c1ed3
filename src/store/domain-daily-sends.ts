import { isPostgres, type Db, type Tx } from './db.ts';

/** How many messages the domain sent on `day` (`YYYY-MM-DD`, UTC). */
export async function sentOn(db: Db, domainId: string, day: string): Promise<number> {
  const row = await db.selectFrom('domain_daily_sends').select('sent').where('domain_id', '=', domainId).where('day', '=', day).executeTakeFirst();
  return row ? Number(row.sent) : 0;
}

/** Adds `count` messages (negative: gives them back) to what the domain sent on `day`; in the transaction that records them. */
export async function addSent(tx: Db | Tx, domainId: string, day: string, count: number): Promise<void> {
  await tx
    .insertInto('domain_daily_sends')
    .values({ domain_id: domainId, day, sent: count })
    .onConflict((oc) => oc.columns(['domain_id', 'day']).doUpdateSet((eb) => ({ sent: eb('domain_daily_sends.sent', '+', eb.ref('excluded.sent')) })))
    .execute();
}

/**
 * Counts up to `wanted` messages on `day` while the day stays within `limit`, and returns how many it
 * counted. The day's row is locked while it is read (SQLite: its one writer), so two sends never share a slot.
 */
export async function reserveSends(tx: Tx, domainId: string, day: string, wanted: number, limit: number): Promise<number> {
  await tx.insertInto('domain_daily_sends').values({ domain_id: domainId, day, sent: 0 }).onConflict((oc) => oc.columns(['domain_id', 'day']).doNothing()).execute();
  const query = tx.selectFrom('domain_daily_sends').select('sent').where('domain_id', '=', domainId).where('day', '=', day);
  const row = await (isPostgres(tx) ? query.forUpdate() : query).executeTakeFirstOrThrow();
  const granted = Math.max(0, Math.min(wanted, limit - Number(row.sent)));
  if (granted > 0) await addSent(tx, domainId, day, granted);
  return granted;
}
