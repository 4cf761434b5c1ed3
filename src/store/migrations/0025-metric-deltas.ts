import type { Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The rollup's increments are appended here in the events' transactions and folded into
// email_metrics every few seconds (workers/metrics-folding.ts): concurrent deliveries append rows of
// their own instead of waiting, one after another, on the lock of the slot's row they all raise.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  await db.schema
    .createTable('email_metric_deltas')
    // SQLite: an alias of the rowid, so an append goes to the end of the table.
    .addColumn('id', pg ? 'bigserial' : 'integer', (c) => c.primaryKey())
    .addColumn('slot', pg ? 'bigint' : 'integer', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .execute();
}
