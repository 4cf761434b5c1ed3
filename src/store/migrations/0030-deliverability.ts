import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// domain_deliverability: each domain's last deliverability check (its checks as JSON), kept to answer
// GET /domains/:id/deliverability and to tell a change of its overall status; it goes with its domain.
export async function up(db: Kysely<any>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('domain_deliverability')
    .addColumn('domain_id', id, (c) => c.primaryKey().references('domains.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('checks', 'text', (c) => c.notNull())
    .addColumn('checked_at', 'text', (c) => c.notNull())
    .execute();
  // The daily checks look for the domains checked longest ago.
  await db.schema.createIndex('domain_deliverability_checked_at').on('domain_deliverability').column('checked_at').execute();
}
