import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// A sending domain's optional cap on messages a UTC day (warm-up), and what each capped domain sent
// each day, shared by every worker.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema.alterTable('domains').addColumn('daily_limit', 'integer').execute();
  await db.schema
    .createTable('domain_daily_sends')
    .addColumn('domain_id', t.id, (c) => c.notNull())
    .addColumn('day', 'text', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('domain_daily_sends_pk', ['domain_id', 'day'])
    .execute();
}
