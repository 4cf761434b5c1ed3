import { sql, type Kysely, type Transaction } from 'kysely';
import { isPostgres } from '../db.ts';
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

// What was unique across the install becomes unique within a project: two projects may each have a
// contact jane@example.com, a property `plan`, a template alias `welcome`, a suppression of one address
// and a custom event `signed_up`. A domain name stays unique across the install (docs/projects.md).
const UNIQUE_PER_PROJECT = [
  ['contacts', 'email'],
  ['contact_properties', 'key'],
  ['templates', 'alias'],
  ['suppressions', 'email'],
  ['custom_events', 'name'],
] as const;

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
  if (isPostgres(db)) {
    for (const [table, column] of UNIQUE_PER_PROJECT) {
      // PostgreSQL's name for the column's inline UNIQUE of migrations 3, 4, 11 and 22.
      await db.schema.alterTable(table).dropConstraint(`${table}_${column}_key`).execute();
      await db.schema.alterTable(table).addUniqueConstraint(`${table}_project_${column}`, ['project_id', column]).execute();
    }
  } else {
    await withForeignKeysOff(db, (tx) => rebuildUniquePerProject(tx));
  }
  for (const table of LISTED_TABLES) {
    await db.schema.createIndex(`${table}_project`).on(table).columns(['project_id', 'id']).execute();
  }
}

/**
 * SQLite's steps 1 and 12 of its ALTER procedure (sqlite.org/lang_altertable.html#otheralter): with
 * foreign keys on, dropping a table would delete its children's rows (cascade); a pragma that only
 * takes effect outside a transaction.
 */
async function withForeignKeysOff(db: Kysely<any>, steps: (tx: Transaction<any>) => Promise<void>): Promise<void> {
  const { rows } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
  await sql`pragma foreign_keys = off`.execute(db);
  try {
    await db.transaction().execute(steps);
  } finally {
    if (rows[0]?.foreign_keys) await sql`pragma foreign_keys = on`.execute(db);
  }
}

/**
 * SQLite cannot drop a column's inline UNIQUE: each table is made anew from its own definition, the
 * column's UNIQUE moved to (project_id, column), its rows copied, its indexes made again (steps 2 to 11),
 * all in one transaction; then every foreign key is checked, as the children now point at the new tables.
 */
async function rebuildUniquePerProject(tx: Transaction<any>): Promise<void> {
  for (const [table, column] of UNIQUE_PER_PROJECT) {
    const { rows } = await sql<{ sql: string }>`select sql from sqlite_master where type = 'table' and name = ${table}`.execute(tx);
    const { rows: indexes } = await sql<{ sql: string }>`select sql from sqlite_master where type in ('index', 'trigger') and tbl_name = ${table} and sql is not null`.execute(tx);
    let definition = rows[0]!.sql;
    definition = replaceOnce(definition, `CREATE TABLE "${table}" (`, `CREATE TABLE "${table}_new" (`);
    definition = replaceOnce(definition, new RegExp(`("${column}" [^,]*) unique,`), '$1,');
    definition = replaceOnce(definition, /\)$/, `, constraint "${table}_project_${column}" unique ("project_id", "${column}"))`);
    await sql.raw(definition).execute(tx);
    // Same columns in the same order: only the constraint moved.
    await sql`insert into ${sql.table(`${table}_new`)} select * from ${sql.table(table)}`.execute(tx);
    await sql`drop table ${sql.table(table)}`.execute(tx);
    await sql`alter table ${sql.table(`${table}_new`)} rename to ${sql.table(table)}`.execute(tx);
    for (const index of indexes) await sql.raw(index.sql).execute(tx);
  }
  const { rows: broken } = await sql<{ table: string; parent: string }>`pragma foreign_key_check`.execute(tx);
  if (broken.length > 0) throw new Error(`a foreign key of ${broken[0]!.table} names a missing row of ${broken[0]!.parent}`);
}

/** `text` with its one match of `pattern` replaced; a definition other than the one expected stops the migration. */
function replaceOnce(text: string, pattern: string | RegExp, replacement: string): string {
  const found = typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text);
  if (!found) throw new Error(`migration 35 expected ${String(pattern)} in: ${text}`);
  return text.replace(pattern, replacement);
}
