import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The MIME source of an email that came whole (SMTP submission): sent as it was submitted, with the
// headers Mailroom added, rather than composed from the email's fields.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('email_sources')
    .addColumn('email_id', t.id, (c) => c.primaryKey().references('emails.id').onDelete('cascade'))
    .addColumn('raw', t.blob, (c) => c.notNull())
    .execute();
}
