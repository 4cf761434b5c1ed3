import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// A template is its identity (name, alias) and pointers to at most two versions of its content: the
// current one (what GET shows and PATCH edits) and the published one (what sending reads). Published
// versions are never edited in place, so sending reads one row by primary key.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('templates')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('alias', 'text', (c) => c.unique())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('current_version_id', t.id, (c) => c.notNull())
    .addColumn('published_version_id', t.id)
    .addColumn('published_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('template_versions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('template_id', t.id, (c) => c.notNull().references('templates.id').onDelete('cascade'))
    .addColumn('from', 'text')
    .addColumn('subject', 'text')
    .addColumn('reply_to', 'text')
    .addColumn('html', 'text', (c) => c.notNull())
    .addColumn('text', 'text')
    .addColumn('variables', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('template_versions_template').on('template_versions').column('template_id').execute();

  // The template an email was sent with; no foreign key, so deleting a template keeps its emails.
  await db.schema.alterTable('emails').addColumn('template_id', t.id).execute();
}
