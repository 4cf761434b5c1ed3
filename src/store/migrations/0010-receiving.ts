import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Receiving: each message taken by the inbound SMTP server (its parsed fields, its envelope and its
// authentication results), the original bytes beside it, and its attachments, each stored once.
// `settings` keeps what every process of a PostgreSQL install must share, such as the SMTP TLS pair.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('received_emails')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('envelope_from', 'text', (c) => c.notNull())
    .addColumn('received_for', 'text', (c) => c.notNull())
    .addColumn('client_address', 'text', (c) => c.notNull())
    .addColumn('from', 'text', (c) => c.notNull())
    .addColumn('to', 'text', (c) => c.notNull())
    .addColumn('cc', 'text', (c) => c.notNull())
    .addColumn('bcc', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .addColumn('headers', 'text', (c) => c.notNull())
    .addColumn('authentication', 'text')
    .addColumn('size', 'integer', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('received_messages')
    .addColumn('email_id', t.id, (c) => c.primaryKey().references('received_emails.id').onDelete('cascade'))
    .addColumn('raw', t.blob, (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('received_attachments')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('email_id', t.id, (c) => c.notNull().references('received_emails.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('content_disposition', 'text')
    .addColumn('content_id', 'text')
    .addColumn('size', 'integer', (c) => c.notNull())
    .addColumn('content', t.blob, (c) => c.notNull())
    .execute();
  await db.schema.createIndex('received_attachments_email').on('received_attachments').columns(['email_id', 'position']).execute();

  await db.schema
    .createTable('settings')
    .addColumn('name', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
