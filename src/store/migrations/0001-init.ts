import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('api_keys')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('permission', 'text', (c) => c.notNull())
    .addColumn('domain_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('last_used_at', 'text')
    .execute();

  await db.schema
    .createTable('emails')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('from', 'text', (c) => c.notNull())
    .addColumn('to', 'text', (c) => c.notNull())
    .addColumn('cc', 'text', (c) => c.notNull())
    .addColumn('bcc', 'text', (c) => c.notNull())
    .addColumn('reply_to', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('headers', 'text')
    .addColumn('tags', 'text')
    .addColumn('message_id', 'text', (c) => c.notNull())
    .addColumn('scheduled_at', 'text')
    .addColumn('last_event', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('email_contents')
    .addColumn('email_id', t.id, (c) => c.primaryKey().references('emails.id').onDelete('cascade'))
    .addColumn('html', 'text')
    .addColumn('text', 'text')
    .execute();

  await db.schema
    .createTable('email_recipients')
    .addColumn('email_id', t.id, (c) => c.notNull().references('emails.id').onDelete('cascade'))
    .addColumn('address', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_recipients_pk', ['email_id', 'address'])
    .execute();

  await db.schema
    .createTable('email_attachments')
    .addColumn('email_id', t.id, (c) => c.notNull().references('emails.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('filename', 'text')
    .addColumn('content_type', 'text')
    .addColumn('content_id', 'text')
    .addColumn('content', t.blob, (c) => c.notNull())
    .addPrimaryKeyConstraint('email_attachments_pk', ['email_id', 'position'])
    .execute();

  await db.schema
    .createTable('email_events')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('email_id', t.id, (c) => c.notNull().references('emails.id').onDelete('cascade'))
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('recipient', 'text')
    .addColumn('response', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('email_events_email').on('email_events').columns(['email_id', 'id']).execute();

  await db.schema
    .createTable('captured_messages')
    .addColumn('email_id', t.id, (c) => c.primaryKey().references('emails.id').onDelete('cascade'))
    .addColumn('raw', t.blob, (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('task', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.unique())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull())
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('locked_by', 'text')
    .addColumn('locked_at', 'bigint')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('jobs_run_at').on('jobs').column('run_at').execute();
}
