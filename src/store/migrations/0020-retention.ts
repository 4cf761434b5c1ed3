import { sql, type Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// Retention (domain/retention/retention.ts) removes the bodies of old emails in batches and keeps their
// rows, marked with when. Finding the next batch reads created_at (the test clock's time, which ids,
// stamped with the wall clock, do not follow) through partial indexes that hold only emails whose body
// is still there: each batch leaves them, so the next starts at the oldest left, not at the first email.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('emails').addColumn('body_removed_at', 'text').execute();
  await db.schema.alterTable('received_emails').addColumn('body_removed_at', 'text').execute();
  await db.schema.createIndex('emails_body_kept').on('emails').column('created_at').where(sql.ref('body_removed_at'), 'is', null).execute();
  await db.schema.createIndex('received_emails_body_kept').on('received_emails').column('created_at').where(sql.ref('body_removed_at'), 'is', null).execute();
  await db.schema.createIndex('webhook_attempts_sent_at').on('webhook_attempts').column('sent_at').execute();
}
