import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The admin key's dashboard sessions (docs/projects.md): held apart from the keys' sessions, since the
// admin key is no row of api_keys. Each names the hash of the admin key it signed in with (changing
// MAILROOM_ADMIN_KEY ends them) and the project it browses, if any (deleting the project unsets it).
export async function up(db: Kysely<any>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('admin_sessions')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('admin_key_hash', 'text', (c) => c.notNull())
    .addColumn('project_id', id, (c) => c.references('projects.id').onDelete('set null'))
    .addColumn('csrf_token', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('admin_sessions_expiry').on('admin_sessions').column('expires_at').execute();
}
