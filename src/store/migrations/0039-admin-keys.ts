import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Admin keys made with `npm run keys -- create --admin` (docs/projects.md): each is an admin credential
// as MAILROOM_ADMIN_KEY is, belongs to no project, and is stored as its token's hash alone.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('admin_keys')
    .addColumn('id', columnTypes(db).id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('token_hash', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
