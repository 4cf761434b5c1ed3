import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The email metrics rollup: a count per 15-minute UTC slot, sender domain, broadcast ('' for none) and
// metric, raised in the transaction of the events it counts (store/email-metrics.ts). Keyed by slot
// first, every question being a range of slots, then metric: sums by slot and metric (and domain) read
// the key in order, with no sort. On SQLite the rows are stored in the key's order (WITHOUT ROWID), so
// a range is read in one pass rather than a lookup per row.
export async function up(db: Kysely<any>): Promise<void> {
  const pg = isPostgres(db);
  const epochMs = pg ? 'bigint' : 'integer';
  const table = db.schema
    .createTable('email_metrics')
    .addColumn('slot', epochMs, (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    // A slot's count fits 32 bits; PostgreSQL sums those as bigint, faster than the numeric a bigint sums to.
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_metrics_pk', ['slot', 'metric', 'domain', 'broadcast_id']);
  await (pg ? table : table.modifyEnd(sql`without rowid`)).execute();
}
