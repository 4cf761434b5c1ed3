import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// Opens, clicks and unsubscribes are email events too: a click keeps the link followed, and an event
// a bot made (a prefetching scanner) is kept but flagged, so that it counts for nothing.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('email_events').addColumn('link', 'text').execute();
  await db.schema.alterTable('email_events').addColumn('bot', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
