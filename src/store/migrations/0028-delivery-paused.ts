import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// A worker's row says why its delivery is paused as a whole (the relay cannot be reached or refuses
// us), so that the health check and the dashboard of any process can say so.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('workers').addColumn('delivery_paused', 'text').execute();
}
