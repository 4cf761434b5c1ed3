import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { openDb } from '../../src/store/db.ts';
import { migrate } from '../../src/store/migrations/index.ts';
import { postgresSchema } from '../support/postgres-schema.ts';

// Tests and tenants each migrate a schema of their own on one PostgreSQL server while others come and go.
// Kysely's own introspection read every schema and failed when one was dropped during the read (3F000,
// naming the other schema); the migrator now looks at the connection's schema alone.

const base = process.env.TEST_DATABASE_URL;

describe('migrations beside schemas dropped at the same time (postgres)', { skip: !base }, () => {
  const ballast: { drop(): Promise<void> }[] = [];
  let admin: pg.Client;
  before(async () => {
    admin = new pg.Client({ connectionString: base });
    await admin.connect();
    // Other schemas with many tables make a read of every schema long enough for a drop to fall inside it.
    for (let i = 0; i < 5; i++) {
      const schema = await postgresSchema(base!, 'ballast');
      ballast.push(schema);
      const name = schemaOf(schema.url);
      await admin.query(Array.from({ length: 100 }, (_, j) => `create table ${name}.t${j} (a int, b text, c text)`).join(';'));
    }
  });
  after(async () => {
    for (const schema of ballast) await schema.drop();
    await admin.end();
  });

  it('migrates each schema to the latest, twice over, while others are created and dropped', async () => {
    let stop = false;
    const churn = async () => {
      while (!stop) {
        const other = await postgresSchema(base!, 'dropped');
        await admin.query(`create table ${schemaOf(other.url)}.x (a int)`);
        await other.drop();
      }
    };
    const churning = [churn(), churn(), churn()];
    try {
      for (let round = 0; round < 6; round++) {
        const mine = await postgresSchema(base!, 'migrated');
        const db = openDb(mine.url);
        try {
          await migrate(db);
          await migrate(db);
          const { rows } = await admin.query(`select count(*)::int as n from ${schemaOf(mine.url)}.kysely_migration`);
          assert.ok(rows[0].n > 30, `every migration recorded, not ${rows[0].n}`);
        } finally {
          await db.destroy();
          await mine.drop();
        }
      }
    } finally {
      stop = true;
      await Promise.all(churning);
    }
  });
});

function schemaOf(url: string): string {
  return new URL(url).searchParams.get('options')!.replace('-c search_path=', '');
}
