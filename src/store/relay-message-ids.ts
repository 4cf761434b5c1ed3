import type { Db, Tx } from './db.ts';
import type { RelayMessageIdTable } from './schema.ts';

/** Keeps the ids a relay gave recipients' messages; one kept already (a repeated attempt) stays. */
export async function insertRelayIds(tx: Tx, rows: RelayMessageIdTable[]): Promise<void> {
  if (rows.length === 0) return;
  await tx.insertInto('relay_message_ids').values(rows).onConflict((oc) => oc.columns(['provider_id', 'email_id', 'recipient']).doNothing()).execute();
}

/** The emails and recipients a relay's id names (one transaction for several recipients names them all). */
export async function findByRelayId(db: Db, providerId: string): Promise<RelayMessageIdTable[]> {
  return db.selectFrom('relay_message_ids').selectAll().where('provider_id', '=', providerId).limit(100).execute();
}
