import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// One row per running worker, renewed every few seconds: a job whose `locked_by` has no recent row
// here belongs to a worker that died, and is taken over. `id` is the worker's id as in `jobs.locked_by`
// (plain text on both dialects, so the two compare without a collation mismatch).
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('heartbeat_at', 'bigint', (c) => c.notNull())
    .execute();
}
