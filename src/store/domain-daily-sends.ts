import { isPostgres, type Db, type Tx } from './db.ts';

/** Adds `count` messages (negative: gives them back) to what the domain sent on `day`; in the transaction that records them. */
export async function addSent(tx: Db | Tx, domainId: string, day: string, count: number): Promise<void> {
  await tx
    .insertInto('domain_daily_sends')
    .values({ domain_id: domainId, day, sent: count })
    .onConflict((oc) => oc.columns(['domain_id', 'day']).doUpdateSet((eb) => ({ sent: eb('domain_daily_sends.sent', '+', eb.ref('excluded.sent')) })))
    .execute();
}

/** Locks the domain's row of `day` (SQLite: its one writer does), so that two sends never share a slot; returns what it sent. */
export async function lockDay(tx: Tx, domainId: string, day: string): Promise<number> {
  await tx.insertInto('domain_daily_sends').values({ domain_id: domainId, day, sent: 0 }).onConflict((oc) => oc.columns(['domain_id', 'day']).doNothing()).execute();
  const query = tx.selectFrom('domain_daily_sends').select('sent').where('domain_id', '=', domainId).where('day', '=', day);
  const row = await (isPostgres(tx) ? query.forUpdate() : query).executeTakeFirstOrThrow();
  return Number(row.sent);
}
