import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// What each project with a quota sent each UTC day and month (domain/projects/quotas.ts): a counter row
// per project and period, taken in the transaction of the send, so that every API process agrees.
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('project_sends')
    .addColumn('project_id', columnTypes(db).id, (c) => c.notNull())
    // `2026-11-29` (a day) or `2026-11` (a month).
    .addColumn('period', 'text', (c) => c.notNull())
    .addColumn('sent', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('project_sends_pk', ['project_id', 'period'])
    .execute();
}
