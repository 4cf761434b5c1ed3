// Migration 35 on a database the previous version filled: every row of every owned table lands in the
// project `default`, and what worked before (a key, its emails, its domains) works unchanged. The tables
// whose unique values become unique per project (rebuilt on SQLite) keep every row, column, index and
// child row, and their uniqueness within the default project.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pino from 'pino';
import { Resend } from 'resend';
import { hashToken } from '../../src/domain/api-keys/api-keys.ts';
import { createAvailability } from '../../src/store/availability.ts';
import { isPostgres, isUniqueViolation, openDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { createTestDatabase, dialects, startApp, type TestDatabase } from '../support/harness.ts';

const DEFAULT_PROJECT_ID = '00000000-0000-7000-8000-000000000000';
const TOKEN = 're_upgrade_0123456789abcdefghijklmnopqrstuvwxyz';
const KEY_ID = '0192e3a4-0000-7000-8000-000000000001';
const DOMAIN_ID = '0192e3a4-0000-7000-8000-000000000002';
const EMAIL_ID = '0192e3a4-0000-7000-8000-000000000003';
const CONTACT_ID = '0192e3a4-0000-7000-8000-000000000004';
const SEGMENT_ID = '0192e3a4-0000-7000-8000-000000000005';
const PROPERTY_ID = '0192e3a4-0000-7000-8000-000000000006';
const TEMPLATE_ID = '0192e3a4-0000-7000-8000-000000000007';
const VERSION_ID = '0192e3a4-0000-7000-8000-000000000008';
const T = '2026-01-02 03:04:05.678+00';

// The rows the app reads back after the upgrade, as the previous version wrote them.
const KNOWN: Record<string, Record<string, unknown>> = {
  domains: { id: DOMAIN_ID, name: 'old.example', status: 'not_started', record_statuses: '{}', region: 'us-east-1', custom_return_path: 'send', created_at: T },
  api_keys: { id: KEY_ID, name: 'old key', token_hash: hashToken(TOKEN), permission: 'full_access', domain_id: null, created_at: T, configured: 0 },
  emails: { id: EMAIL_ID, from: 'a@old.example', to: '["b@example.com"]', cc: '[]', bcc: '[]', reply_to: '[]', subject: 'before', message_id: '<x@old.example>', last_event: 'delivered', created_at: T },
  contacts: { id: CONTACT_ID, email: 'jane@example.com', first_name: 'Jane', last_name: null, unsubscribed: 0, created_at: T },
  segments: { id: SEGMENT_ID, name: 'old segment', created_at: T },
  segment_contacts: { segment_id: SEGMENT_ID, contact_id: CONTACT_ID },
  contact_properties: { id: PROPERTY_ID, key: 'plan', type: 'string', fallback_value: '"free"', created_at: T },
  contact_property_values: { contact_id: CONTACT_ID, property_id: PROPERTY_ID, value: '"pro"' },
  templates: { id: TEMPLATE_ID, alias: 'welcome', name: 'Welcome', current_version_id: VERSION_ID, published_version_id: VERSION_ID, published_at: T, created_at: T, updated_at: T },
  template_versions: { id: VERSION_ID, template_id: TEMPLATE_ID, html: '<p>Hi {{{FIRST_NAME}}}</p>', variables: '[]', created_at: T },
  suppressions: { id: '0192e3a4-0000-7000-8000-000000000009', email: 'gone@example.com', origin: 'manual', source_id: null, created_at: T },
  custom_events: { id: '0192e3a4-0000-7000-8000-00000000000a', name: 'signed_up', schema: null, created_at: T, updated_at: null },
};

/** The tables whose value was unique across the install, and becomes unique within a project. */
const UNIQUE_PER_PROJECT = { contacts: 'email', contact_properties: 'key', templates: 'alias', suppressions: 'email', custom_events: 'name' } as const;
/** Those tables and their children (cascading foreign keys): no row may be lost by the rebuild. */
const REBUILT = [...Object.keys(UNIQUE_PER_PROJECT), 'segment_contacts', 'contact_property_values', 'template_versions'];

/** Every row of `tables`, without their project, in a comparable order. */
async function rowsOf(db: Kysely<any>, tables: string[]): Promise<Record<string, string[]>> {
  const rows: Record<string, string[]> = {};
  for (const table of tables) {
    const all = await db.selectFrom(table).selectAll().execute();
    rows[table] = all.map(({ project_id: _, ...row }) => JSON.stringify(row)).sort();
  }
  return rows;
}

/** The columns of `tables` (but the project) as introspection sees them, and the names of their indexes. */
async function shapeOf(db: Kysely<any>, tables: string[]) {
  const columns = Object.fromEntries(
    (await ownTables(db))
      .filter((table) => tables.includes(table.name))
      .map((table) => [table.name, table.columns.filter((column) => column.name !== 'project_id').map(({ name, dataType, isNullable, hasDefaultValue }) => ({ name, dataType, isNullable, hasDefaultValue }))]),
  );
  const { rows: indexes } = isPostgres(db)
    ? await sql<{ table: string; name: string }>`select tablename as "table", indexname as name from pg_indexes where schemaname = current_schema()`.execute(db)
    : await sql<{ table: string; name: string }>`select tbl_name as "table", name from sqlite_master where type = 'index'`.execute(db);
  return { columns, indexes: indexes.filter((index) => tables.includes(index.table)).map((index) => `${index.table}.${index.name}`) };
}

/** The database's tables; on PostgreSQL those of the test's schema only (introspection lists every schema's). */
async function ownTables(db: Kysely<any>) {
  const tables = await db.introspection.getTables();
  if (!isPostgres(db)) return tables;
  const { rows } = await sql<{ schema: string }>`select current_schema() as schema`.execute(db);
  return tables.filter((table) => table.schema === rows[0]!.schema);
}

/** Every NOT NULL column without a default gets a value of its type, unless KNOWN gives one. */
async function fillEveryTable(db: Kysely<any>): Promise<string[]> {
  const order = (name: string) => (name in KNOWN ? Object.keys(KNOWN).indexOf(name) : 99);
  // Parents first, so that the children's references hold.
  const tables = (await ownTables(db)).filter((table) => !table.name.startsWith('kysely_')).sort((a, b) => order(a.name) - order(b.name));
  const filled: string[] = [];
  for (const table of tables) {
    const row: Record<string, unknown> = {};
    for (const column of table.columns) {
      if (column.isNullable || column.hasDefaultValue || column.isAutoIncrementing) continue;
      const type = column.dataType.toLowerCase();
      if (column.name.endsWith('domain_id')) row[column.name] = DOMAIN_ID;
      else if (column.name.endsWith('email_id')) row[column.name] = EMAIL_ID;
      else if (/int|real|numeric/.test(type)) row[column.name] = 1;
      else if (/blob|bytea/.test(type)) row[column.name] = Buffer.from('x');
      else row[column.name] = column.name === 'id' ? `0192e3a4-${table.name.length.toString().padStart(4, '0')}-7000-8000-${String(filled.length).padStart(12, '0')}` : `${column.name}-${table.name}`;
    }
    filled.push(table.name);
    // The others are filled where they can be: some hold rows whose parents this filler cannot guess.
    try {
      await db.insertInto(table.name).values({ ...row, ...KNOWN[table.name] }).execute();
    } catch (error) {
      if (table.name in KNOWN) throw error;
      filled.pop();
    }
  }
  return filled;
}

for (const dialect of dialects) {
  describe(`upgrade to projects (${dialect})`, () => {
    let database: TestDatabase;
    after(() => database?.drop());

    it('puts every row of every owned table in the project default, and the old key keeps working', async () => {
      database = await createTestDatabase(dialect);
      const db = openDb(database.url, createAvailability(pino({ level: 'silent' }), Date.now));
      await migrate(db, '0034-mta-sts-tls-reports');
      const filled = await fillEveryTable(db);
      for (const table of REBUILT) assert.ok(filled.includes(table), `${table} was not filled`);
      const rowsBefore = await rowsOf(db, REBUILT);
      const shapeBefore = await shapeOf(db, REBUILT);
      await migrate(db);

      // The rebuilt tables keep their rows and their children's, their columns and their indexes.
      assert.deepEqual(await rowsOf(db, REBUILT), rowsBefore);
      const shapeAfter = await shapeOf(db, REBUILT);
      assert.deepEqual(shapeAfter.columns, shapeBefore.columns);
      const replaced = Object.entries(UNIQUE_PER_PROJECT).map(([table, column]) => `${table}.${table}_${column}_key`);
      for (const index of shapeBefore.indexes.filter((name) => !replaced.includes(name))) assert.ok(shapeAfter.indexes.includes(index), `${index} is gone`);
      if (!isPostgres(db)) {
        const { rows: pragma } = await sql<{ foreign_keys: number }>`pragma foreign_keys`.execute(db);
        assert.equal(pragma[0]!.foreign_keys, 1, 'foreign keys are on again');
      }
      // Unique within the default project, as before; another project may hold the same value.
      const loose = db as Kysely<any>;
      for (const [table, column] of Object.entries(UNIQUE_PER_PROJECT)) {
        const row = await loose.selectFrom(table).selectAll().where(column, '=', KNOWN[table]![column]).executeTakeFirstOrThrow();
        const copy = { ...row, id: `${row.id.slice(0, -4)}ffff` };
        await assert.rejects(loose.insertInto(table).values(copy).execute(), isUniqueViolation, `a second ${table}.${column} in the default project`);
        await loose.insertInto(table).values({ ...copy, project_id: '0192e3a4-2222-7000-8000-000000000000' }).execute();
        await loose.deleteFrom(table).where('id', '=', copy.id).execute();
      }

      const owned = (await ownTables(db)).filter((table) => table.columns.some((column) => column.name === 'project_id')).map((table) => table.name);
      for (const table of ['api_keys', 'domains', 'emails', 'received_emails', 'contacts', 'segments', 'topics', 'contact_properties', 'templates', 'broadcasts', 'suppressions', 'webhooks', 'events', 'automations', 'custom_events', 'api_logs', 'email_metrics', 'dmarc_reports']) {
        assert.ok(owned.includes(table), `${table} has no project_id`);
      }
      const projects = await db.selectFrom('projects').selectAll().execute();
      assert.deepEqual(projects.map((project) => [project.id, project.name]), [[DEFAULT_PROJECT_ID, 'default']]);
      let rows = 0;
      for (const table of owned) {
        const counts = await (db as Kysely<any>)
          .selectFrom(table)
          .select(['project_id', (eb) => eb.fn.countAll<number>().as('n')])
          .groupBy('project_id')
          .execute();
        for (const count of counts) assert.equal(count.project_id, DEFAULT_PROJECT_ID, `${table} has rows in ${count.project_id}`);
        rows += counts.reduce((sum, count) => sum + Number(count.n), 0);
      }
      assert.ok(filled.filter((table) => owned.includes(table)).length >= 15, `only ${filled.join(', ')} were filled`);
      assert.ok(rows >= 15);
      await db.destroy();

      const t = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: 're_configured_0123456789abcdefghijklmnopqrstu' } });
      try {
        const resend = new Resend(TOKEN, { baseUrl: t.url });
        const email = await resend.emails.get(EMAIL_ID);
        assert.equal(email.data?.subject, 'before', JSON.stringify(email.error));
        const domains = await resend.domains.list();
        assert.deepEqual(domains.data?.data.map((domain) => domain.name), ['old.example']);
        const keys = await resend.apiKeys.list();
        assert.ok(keys.data?.data.some((key) => key.id === KEY_ID));

        // The rebuilt tables through the old key: found by their unique values, still unique, and their
        // children still theirs (deleting the parent cascades).
        const contact = await resend.contacts.get('jane@example.com');
        assert.deepEqual([contact.data?.id, contact.data?.properties], [CONTACT_ID, { plan: { value: 'pro', type: 'string' } }], JSON.stringify(contact.error));
        assert.equal((await resend.contacts.create({ email: 'Jane@example.com' })).data?.id, CONTACT_ID);
        assert.equal((await resend.contacts.list({ segmentId: SEGMENT_ID })).data?.data[0]?.id, CONTACT_ID);
        assert.equal((await resend.contactProperties.create({ key: 'plan', type: 'string' })).error?.statusCode, 422);
        assert.equal((await resend.templates.get('welcome')).data?.id, TEMPLATE_ID);
        assert.equal((await resend.templates.create({ name: 'Again', html: '<p>x</p>', alias: 'welcome' })).error?.statusCode, 422);
        assert.equal((await resend.contacts.remove(CONTACT_ID)).data?.deleted, true);
        assert.equal((await resend.templates.remove(TEMPLATE_ID)).data?.deleted, true);
        const children = await rowsOf(t.ctx.db, ['segment_contacts', 'contact_property_values', 'template_versions']);
        assert.deepEqual(children, { segment_contacts: [], contact_property_values: [], template_versions: [] });
      } finally {
        await t.close();
      }
    });
  });
}
