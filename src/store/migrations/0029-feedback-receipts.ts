import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// feedback_receipts: every bounce, complaint or delivery notice recorded (a provider's notification, a
// DSN or ARF report by mail), once: its key is the source and the source's own id of it, inserted in
// the transaction of what it records, so one delivered twice records once. Its sender domain and time
// say, per domain, which source last reported. relay_message_ids: the id a relay's 250 answer gave a
// recipient's message, which providers' notifications name it by, kept as long as the email's body.
export async function up(db: Kysely<any>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('feedback_receipts')
    .addColumn('source', 'text', (c) => c.notNull())
    .addColumn('receipt_id', 'text', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('email_id', id, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('feedback_receipts_pk', ['source', 'receipt_id'])
    .execute();
  await db.schema.createIndex('feedback_receipts_domain').on('feedback_receipts').columns(['domain', 'created_at']).execute();
  await db.schema
    .createTable('relay_message_ids')
    .addColumn('provider_id', 'text', (c) => c.notNull())
    .addColumn('email_id', id, (c) => c.notNull())
    .addColumn('recipient', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('relay_message_ids_pk', ['provider_id', 'email_id', 'recipient'])
    .execute();
  // Retention removes an email's ids with its body.
  await db.schema.createIndex('relay_message_ids_email').on('relay_message_ids').column('email_id').execute();
}
