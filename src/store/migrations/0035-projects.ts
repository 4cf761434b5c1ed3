import type { Kysely } from 'kysely';
import { columnTypes } from './column-types.ts';

// Frozen: never edit a migration that has shipped; add the next one.
// Projects (docs/projects.md): each owned table gets the project of its rows, and what an install held
// before becomes the project `default`, whose id is fixed so that every row can take it as a default
// (SQLite adds a NOT NULL column only with one). Child rows (an email's recipients, a template's
// versions...) are reached through their parent and carry no project of their own.
const DEFAULT_PROJECT_ID = '00000000-0000-7000-8000-000000000000';

const OWNED_TABLES = [
  'api_keys',
  'api_logs',
  'domains',
  'dmarc_reports',
  'contacts',
  'contact_imports',
  'contact_properties',
  'segments',
  'topics',
  'templates',
  'broadcasts',
  'emails',
  'email_metrics',
  'email_metric_deltas',
  'events',
  'received_emails',
  'suppressions',
  'webhooks',
  'custom_events',
  'automations',
];

// The lists read newest first within one project: the project, then the keyset's id.
const LISTED_TABLES = ['emails', 'received_emails', 'contacts', 'events', 'api_logs', 'api_keys', 'domains'];

export async function up(db: Kysely<any>): Promise<void> {
  const { id } = columnTypes(db);
  await db.schema
    .createTable('projects')
    .addColumn('id', id, (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('rate_limit', 'integer')
    .addColumn('daily_quota', 'integer')
    .addColumn('monthly_quota', 'integer')
    // Sealed with MAILROOM_SECRET (secrets/encryption.ts), the project's id as its context.
    .addColumn('smtp_url', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  const now = new Date().toISOString().replace('T', ' ').replace('Z', '+00');
  await db.insertInto('projects').values({ id: DEFAULT_PROJECT_ID, name: 'default', created_at: now }).execute();
  for (const table of OWNED_TABLES) {
    await db.schema
      .alterTable(table)
      .addColumn('project_id', id, (c) => c.notNull().defaultTo(DEFAULT_PROJECT_ID))
      .execute();
  }
  for (const table of LISTED_TABLES) {
    await db.schema.createIndex(`${table}_project`).on(table).columns(['project_id', 'id']).execute();
  }
}
