import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Automations: custom events (a name and an optional payload schema), automations with their versions
// (the graph of steps and connections, immutable once written), runs (one per contact and trigger) and
// the steps each run executed. A step waiting for an event carries its name and contact, so an incoming
// event finds the waits it ends through a small index.
export async function up(db: Kysely<any>): Promise<void> {
  const t = columnTypes(db);
  await db.schema
    .createTable('custom_events')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('schema', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text')
    .execute();

  await db.schema
    .createTable('automations')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('version_id', t.id, (c) => c.notNull())
    .addColumn('trigger_event', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automations_trigger').on('automations').columns(['trigger_event', 'status']).execute();

  await db.schema
    .createTable('automation_versions')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('automation_id', t.id, (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('steps', 'text', (c) => c.notNull())
    .addColumn('connections', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_versions_automation').on('automation_versions').column('automation_id').execute();

  await db.schema
    .createTable('automation_runs')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('automation_id', t.id, (c) => c.notNull().references('automations.id').onDelete('cascade'))
    .addColumn('version_id', t.id, (c) => c.notNull())
    .addColumn('contact_id', t.id, (c) => c.notNull())
    .addColumn('email', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_runs_automation').on('automation_runs').columns(['automation_id', 'id']).execute();

  await db.schema
    .createTable('automation_run_steps')
    .addColumn('id', t.id, (c) => c.primaryKey())
    .addColumn('run_id', t.id, (c) => c.notNull().references('automation_runs.id').onDelete('cascade'))
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('output', 'text')
    .addColumn('error', 'text')
    .addColumn('wait_event', 'text')
    .addColumn('contact_id', t.id, (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('completed_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('automation_run_steps_run').on('automation_run_steps').columns(['run_id', 'id']).execute();
  await db.schema
    .createIndex('automation_run_steps_waiting')
    .on('automation_run_steps')
    .columns(['wait_event', 'contact_id'])
    .where('wait_event', 'is not', null)
    .execute();
}
