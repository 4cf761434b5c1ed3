import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// A domain's marketing mail paused by the guards (domain/deliverability/guards.ts): why and since when,
// null while it sends; and when it was last resumed, so that the bounces that paused it are not counted again.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('domains').addColumn('sending_paused_reason', 'text').execute();
  await db.schema.alterTable('domains').addColumn('sending_paused_at', 'text').execute();
  await db.schema.alterTable('domains').addColumn('sending_resumed_at', 'bigint').execute();
}
