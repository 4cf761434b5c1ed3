import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The email an event is about (its payload's email_id), indexed: an email's page shows the webhooks
// its events went to, with their attempts. Events from before this migration have none.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('events').addColumn('email_id', t.id).execute();
  await db.schema.createIndex('events_email').on('events').columns(['email_id', 'id']).execute();
}
