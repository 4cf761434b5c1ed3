import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// The message of every email as it was last sent, in every delivery mode (it was kept in capture mode
// only, as captured_messages): GET /emails/:id/raw and the dashboard answer for relayed and directly
// delivered mail too.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('captured_messages').renameTo('sent_messages').execute();
}
