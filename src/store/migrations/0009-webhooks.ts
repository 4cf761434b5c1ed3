import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Webhooks: the event log (every state change, as its webhook payload), the endpoints subscribed to
// it, one message per event and endpoint (the outbox, written in the event's transaction) and every
// attempt to deliver a message.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('events')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhooks')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('endpoint', 'text', (c) => c.notNull())
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('disabled_reason', 'text')
    .addColumn('signing_secret', 'text', (c) => c.notNull())
    .addColumn('failing_since', 'bigint')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('webhook_messages')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('webhook_id', t.id, (c) => c.notNull().references('webhooks.id').onDelete('cascade'))
    .addColumn('event_id', t.id, (c) => c.notNull().references('events.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('next_attempt_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_messages_webhook').on('webhook_messages').columns(['webhook_id', 'id']).execute();
  await db.schema.createIndex('webhook_messages_event').on('webhook_messages').columns(['webhook_id', 'event_id']).unique().execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('message_id', t.id, (c) => c.notNull().references('webhook_messages.id').onDelete('cascade'))
    .addColumn('sent_at', 'text', (c) => c.notNull())
    .addColumn('http_status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('response', 'text')
    .execute();
  await db.schema.createIndex('webhook_attempts_message').on('webhook_attempts').columns(['message_id', 'id']).execute();
}
