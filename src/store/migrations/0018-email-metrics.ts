import type { Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The email metrics rollup: a count per 15-minute UTC slot, sender domain, broadcast ('' for none) and
// metric, raised in the transaction of the events it counts (store/email-metrics.ts). Keyed by slot
// first: every question is a range of slots.
export async function up(db: Kysely<any>): Promise<void> {
  const epochMs = isPostgres(db) ? 'bigint' : 'integer';
  await db.schema
    .createTable('email_metrics')
    .addColumn('slot', epochMs, (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('count', epochMs, (c) => c.notNull())
    .addPrimaryKeyConstraint('email_metrics_pk', ['slot', 'domain', 'broadcast_id', 'metric'])
    .execute();
}
