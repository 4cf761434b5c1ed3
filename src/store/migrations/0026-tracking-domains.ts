import type { Kysely } from 'kysely';
import { uuidv7 } from 'uuidv7';

// Frozen: never edit a migration that has shipped; add the next one.
// A domain's tracking subdomain is Resend's tracking domain (/domains/:id/tracking): it gets an id of
// its own, kept when the subdomain changes, and the time it was added. A domain has at most one.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('domains').addColumn('tracking_id', 'text').execute();
  await db.schema.alterTable('domains').addColumn('tracking_created_at', 'text').execute();
  const tracked = await db.selectFrom('domains').select(['id', 'created_at']).where('tracking_subdomain', 'is not', null).execute();
  for (const row of tracked) {
    await db.updateTable('domains').set({ tracking_id: uuidv7(), tracking_created_at: row.created_at }).where('id', '=', row.id).execute();
  }
}
