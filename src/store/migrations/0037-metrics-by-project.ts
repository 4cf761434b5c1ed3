import { sql, type Kysely } from 'kysely';
import { isPostgres } from '../db.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// The metrics rollup counts per project (docs/projects.md): the project leads its key, so that a
// project's question reads one range of it, and two projects' counts of one slot, domain and broadcast
// (a domain that changed hands, or a name no project registered) stay apart instead of adding up.
// SQLite changes a primary key only by rebuilding the table.
export async function up(db: Kysely<any>): Promise<void> {
  const key = ['project_id', 'slot', 'metric', 'domain', 'broadcast_id'] as const;
  if (isPostgres(db)) {
    await sql`alter table email_metrics drop constraint email_metrics_pk`.execute(db);
    await db.schema.alterTable('email_metrics').addPrimaryKeyConstraint('email_metrics_pk', [...key]).execute();
    return;
  }
  await db.schema
    .createTable('email_metrics_by_project')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('slot', 'integer', (c) => c.notNull())
    .addColumn('domain', 'text', (c) => c.notNull())
    .addColumn('broadcast_id', 'text', (c) => c.notNull())
    .addColumn('metric', 'text', (c) => c.notNull())
    .addColumn('count', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('email_metrics_pk', [...key])
    .modifyEnd(sql`without rowid`)
    .execute();
  await sql`insert into email_metrics_by_project (project_id, slot, domain, broadcast_id, metric, count)
    select project_id, slot, domain, broadcast_id, metric, count from email_metrics`.execute(db);
  await db.schema.dropTable('email_metrics').execute();
  await db.schema.alterTable('email_metrics_by_project').renameTo('email_metrics').execute();
}
