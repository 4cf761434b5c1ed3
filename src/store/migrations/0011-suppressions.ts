import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The suppression list: addresses no email goes to, each once (lowercased, as contacts are), with where
// the entry came from and the email that caused it. Lists filter by origin, newest first.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('suppressions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('email', 'text', (c) => c.notNull().unique())
    .addColumn('origin', 'text', (c) => c.notNull())
    .addColumn('source_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('suppressions_origin').on('suppressions').columns(['origin', 'id']).execute();
}
