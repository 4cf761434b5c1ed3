import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// A broadcast's emails, found without reading every email: its counts by status and its recipients
// page by page (the dashboard). Partial, since most emails belong to no broadcast.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.createIndex('emails_broadcast').on('emails').columns(['broadcast_id', 'id']).where('broadcast_id', 'is not', null).execute();
}
