import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// A broadcast holds its content once; each of its emails holds only the recipient's personalisation
// data and is rendered where its body is needed. `broadcast_recipients` is the fan-out's snapshot of
// who receives it, walked in contact-id order from its primary key.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('broadcasts')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text')
    // No foreign keys: deleting a segment or a topic keeps the broadcasts that used them.
    .addColumn('segment_id', t.id, (c) => c.notNull())
    .addColumn('topic_id', t.id)
    .addColumn('from', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text')
    .addColumn('preview_text', 'text')
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'text')
    .addColumn('sent_at', 'text')
    .addColumn('property_fallbacks', 'text')
    .addColumn('fanout_cursor', t.id)
    .execute();

  await db.schema
    .createTable('broadcast_recipients')
    .addColumn('broadcast_id', t.id, (c) => c.notNull().references('broadcasts.id').onDelete('cascade'))
    // No foreign key: a contact deleted during the fan-out is skipped, not a failed insert.
    .addColumn('contact_id', t.id, (c) => c.notNull())
    .addPrimaryKeyConstraint('broadcast_recipients_pk', ['broadcast_id', 'contact_id'])
    .execute();

  // The broadcast an email belongs to (no foreign key: the email outlives any change to it), and the
  // recipient's data its body is rendered with.
  await db.schema.alterTable('emails').addColumn('broadcast_id', t.id).execute();
  await db.schema.alterTable('emails').addColumn('personalization', 'text').execute();
}
