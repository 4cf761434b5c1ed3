import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);

  await db.schema
    .createTable('domains')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('record_statuses', 'text', (c) => c.notNull())
    .addColumn('verify_started_at', 'bigint')
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('custom_return_path', 'text', (c) => c.notNull())
    .addColumn('open_tracking', 'integer', (c) => c.notNull())
    .addColumn('click_tracking', 'integer', (c) => c.notNull())
    .addColumn('tracking_subdomain', 'text')
    .addColumn('tls', 'text', (c) => c.notNull())
    .addColumn('sending', 'text', (c) => c.notNull())
    .addColumn('receiving', 'text', (c) => c.notNull())
    .addColumn('dkim_selector', 'text', (c) => c.notNull())
    .addColumn('dkim_public_key', 'text', (c) => c.notNull())
    .addColumn('dkim_private_key', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}
