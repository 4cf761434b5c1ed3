import { sql, type Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// A sending domain's warm-up (domain/sending-domains/warmup.ts): its first day's volume, its length and
// when it started (epoch ms); and why an email waits for a later day (warmup or daily_limit) and for which
// domain's cap, null otherwise: the cap's slots go to the oldest waiting email first.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('domains').addColumn('warmup_start', 'integer').execute();
  await db.schema.alterTable('domains').addColumn('warmup_days', 'integer').execute();
  await db.schema.alterTable('domains').addColumn('warmup_started_at', 'bigint').execute();
  await db.schema.alterTable('emails').addColumn('waiting_reason', 'text').execute();
  await db.schema.alterTable('emails').addColumn('waiting_domain', columnTypes(db).id).execute();
  await db.schema.createIndex('emails_waiting').on('emails').columns(['waiting_domain', 'id']).where(sql.ref('waiting_domain'), 'is not', null).execute();
}
