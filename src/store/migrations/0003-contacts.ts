import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Contacts are global to the account. Membership and subscription tables are keyed so that a segment's
// contacts read in contact-id order from the primary key (keyset pages cost the same at any depth), and
// every foreign key that cascades has an index leading with it.
// Frozen: never edit a migration that has shipped; add the next one.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema.alterTable('emails').addColumn('topic_id', 'text').execute();

  await db.schema
    .createTable('contacts')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('first_name', 'text')
    .addColumn('last_name', 'text')
    .addColumn('unsubscribed', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('segments')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('segment_contacts')
    .addColumn('segment_id', t.id, (c) => c.notNull().references('segments.id').onDelete('cascade'))
    .addColumn('contact_id', t.id, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('segment_contacts_pk', ['segment_id', 'contact_id'])
    .execute();
  await db.schema.createIndex('segment_contacts_contact').on('segment_contacts').columns(['contact_id', 'segment_id']).execute();

  await db.schema
    .createTable('topics')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('description', 'text')
    .addColumn('default_subscription', 'text', (c) => c.notNull())
    .addColumn('visibility', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('contact_topics')
    .addColumn('contact_id', t.id, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('topic_id', t.id, (c) => c.notNull().references('topics.id').onDelete('cascade'))
    .addColumn('subscription', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_topics_pk', ['contact_id', 'topic_id'])
    .execute();
  await db.schema.createIndex('contact_topics_topic').on('contact_topics').column('topic_id').execute();

  await db.schema
    .createTable('contact_properties')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('key', 'text', (c) => c.notNull().unique())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('fallback_value', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  // Property values live apart from the contact row, which every list and send check reads.
  await db.schema
    .createTable('contact_property_values')
    .addColumn('contact_id', t.id, (c) => c.notNull().references('contacts.id').onDelete('cascade'))
    .addColumn('property_id', t.id, (c) => c.notNull().references('contact_properties.id').onDelete('cascade'))
    .addColumn('value', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_property_values_pk', ['contact_id', 'property_id'])
    .execute();
  await db.schema.createIndex('contact_property_values_property').on('contact_property_values').column('property_id').execute();

  await db.schema
    .createTable('contact_imports')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('plan', 'text', (c) => c.notNull())
    .addColumn('processed', 'integer', (c) => c.notNull())
    .addColumn('created', 'integer', (c) => c.notNull())
    .addColumn('updated', 'integer', (c) => c.notNull())
    .addColumn('skipped', 'integer', (c) => c.notNull())
    .addColumn('failed', 'integer', (c) => c.notNull())
    .addColumn('error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('completed_at', 'text')
    .execute();

  // The uploaded CSV, in pieces of about a megabyte, so that the worker streams it with flat memory.
  await db.schema
    .createTable('contact_import_chunks')
    .addColumn('import_id', t.id, (c) => c.notNull().references('contact_imports.id').onDelete('cascade'))
    .addColumn('position', 'integer', (c) => c.notNull())
    .addColumn('content', t.blob, (c) => c.notNull())
    .addPrimaryKeyConstraint('contact_import_chunks_pk', ['import_id', 'position'])
    .execute();
}
