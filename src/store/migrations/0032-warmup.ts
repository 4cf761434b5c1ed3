import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// A sending domain's warm-up (domain/sending-domains/warmup.ts): its first day's volume, its length and
// when it started (epoch ms); and why an email waits for a later day (warmup or daily_limit), null otherwise.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('domains').addColumn('warmup_start', 'integer').execute();
  await db.schema.alterTable('domains').addColumn('warmup_days', 'integer').execute();
  await db.schema.alterTable('domains').addColumn('warmup_started_at', 'bigint').execute();
  await db.schema.alterTable('emails').addColumn('waiting_reason', 'text').execute();
}
