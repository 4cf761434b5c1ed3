// Migration 35 on a database the previous version filled: every row of every owned table lands in the
// project `default`, and what worked before (a key, its emails, its domains) works unchanged.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql, type Kysely } from 'kysely';
import pino from 'pino';
import { Resend } from 'resend';
import { hashToken } from '../../src/domain/api-keys/api-keys.ts';
import { createAvailability } from '../../src/store/availability.ts';
import { isPostgres, openDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { createTestDatabase, dialects, startApp, type TestDatabase } from '../support/harness.ts';

const DEFAULT_PROJECT_ID = '00000000-0000-7000-8000-000000000000';
const TOKEN = 're_upgrade_0123456789abcdefghijklmnopqrstuvwxyz';
const KEY_ID = '0192e3a4-0000-7000-8000-000000000001';
const DOMAIN_ID = '0192e3a4-0000-7000-8000-000000000002';
const EMAIL_ID = '0192e3a4-0000-7000-8000-000000000003';
const T = '2026-01-02 03:04:05.678+00';

// The rows the app reads back after the upgrade, as the previous version wrote them.
const KNOWN: Record<string, Record<string, unknown>> = {
  domains: { id: DOMAIN_ID, name: 'old.example', status: 'not_started', record_statuses: '{}', region: 'us-east-1', custom_return_path: 'send', created_at: T },
  api_keys: { id: KEY_ID, name: 'old key', token_hash: hashToken(TOKEN), permission: 'full_access', domain_id: null, created_at: T, configured: 0 },
  emails: { id: EMAIL_ID, from: 'a@old.example', to: '["b@example.com"]', cc: '[]', bcc: '[]', reply_to: '[]', subject: 'before', message_id: '<x@old.example>', last_event: 'delivered', created_at: T },
};

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
      await migrate(db);

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
      } finally {
        await t.close();
      }
    });
  });
}
