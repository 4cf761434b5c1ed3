import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { isPostgres, later, openDb, type Db, type Tx } from '../../src/store/db.ts';
import { inlineParameters } from '../../src/store/postgres/inline-parameters.ts';
import { createTestDatabase, dialects, type TestDatabase } from '../support/harness.ts';
import { startPgCounter } from '../support/pg-counter.ts';

// Writes whose answer nobody reads wait for the transaction's next read or its commit on PostgreSQL,
// their parameters written in as literals (store/postgres/write-behind.ts): what they store, what a
// read in the same transaction sees, and what a failure among them does.

const awkward = ["it's", 'back\\slash', 'E\'x\\\'', '$1 and $$dollar$$', '-- not a comment', '/* nor this */', 'ünïcødé 📬', 'line\nbreak', ''];
const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));

type Probe = { id: string; t: string | null; b: Buffer | null; n: number | null };
const probes = (db: Db) => db.withTables<{ write_behind_probe: Probe }>();

for (const dialect of dialects) {
  describe(`write-behind writes (${dialect})`, () => {
    let database: TestDatabase;
    let db: Db;
    before(async () => {
      database = await createTestDatabase(dialect);
      db = openDb(database.url);
      await sql
        .raw(`create table write_behind_probe (id text primary key, t text, b ${isPostgres(db) ? 'bytea' : 'blob'}, n bigint)`)
        .execute(db);
    });
    after(async () => {
      await db.destroy();
      await database.drop();
    });

    it('stores every value as a parameter would, and a read in the transaction sees the writes before it', async () => {
      const rows = awkward.map((t, i) => ({ id: `v${i}`, t, b: i === 0 ? bytes : null, n: i === 1 ? 1795904907019 : -(i + 1) }));
      const seen = await db.transaction().execute(async (tx) => {
        for (const row of rows) await probes(later(tx)).insertInto('write_behind_probe').values(row).execute();
        await probes(later(tx)).updateTable('write_behind_probe').set({ t: "updated 'later'" }).where('id', '=', 'v8').execute();
        return probes(tx).selectFrom('write_behind_probe').select('id').where('t', '=', "updated 'later'").execute();
      });
      assert.deepEqual(seen, [{ id: 'v8' }]);
      const stored = await probes(db).selectFrom('write_behind_probe').selectAll().orderBy('id').execute();
      assert.deepEqual(
        stored.map((row) => ({ ...row, b: row.b && Buffer.from(row.b), n: row.n === null ? null : Number(row.n) })),
        rows.map((row) => (row.id === 'v8' ? { ...row, t: "updated 'later'" } : row)),
      );
    });

    it('a write that fails at the commit fails the transaction, and nothing of it is stored', async () => {
      await assert.rejects(
        db.transaction().execute(async (tx) => {
          await probes(tx).insertInto('write_behind_probe').values({ id: 'first', t: null, b: null, n: null }).execute();
          await probes(later(tx)).insertInto('write_behind_probe').values({ id: 'v0', t: 'a duplicate key', b: null, n: null }).execute();
        }),
        (error: { code?: string }) => error.code === '23505' || String(error.code).startsWith('SQLITE_CONSTRAINT'),
      );
      assert.equal((await probes(db).selectFrom('write_behind_probe').select('id').where('id', '=', 'first').execute()).length, 0);
    });

    it('a transaction rolled back before any read stores none of its writes', async () => {
      await assert.rejects(
        db.transaction().execute(async (tx) => {
          await probes(later(tx)).insertInto('write_behind_probe').values({ id: 'never', t: null, b: null, n: null }).execute();
          throw new Error('changed its mind');
        }),
        /changed its mind/,
      );
      assert.equal((await probes(db).selectFrom('write_behind_probe').select('id').where('id', '=', 'never').execute()).length, 0);
    });
  });
}

if (dialects.includes('postgres')) {
  describe('write-behind on the wire (postgres)', () => {
    it('a transaction of writes alone is one round trip; a read among them adds one, carrying the writes before it', async () => {
      const database = await createTestDatabase('postgres');
      const counter = await startPgCounter(database.url);
      const db = openDb(counter.url);
      try {
        await sql.raw('create table write_behind_probe (id text primary key, t text, b bytea, n bigint)').execute(db);
        const roundTrips = async (work: (tx: Tx) => Promise<void>) => {
          const before = counter.counts();
          await db.transaction().execute(work);
          const after = counter.counts();
          return { roundTrips: after.roundTrips - before.roundTrips, statements: after.statements - before.statements };
        };
        const write = (tx: Tx, id: string) =>
          probes(later(tx)).insertInto('write_behind_probe').values({ id, t: null, b: null, n: null }).execute();

        // BEGIN, three inserts and COMMIT: five statements in one message.
        const threeWrites = async (tx: Tx) => {
          for (const id of ['a', 'b', 'c']) await write(tx, id);
        };
        assert.deepEqual(await roundTrips(threeWrites), { roundTrips: 1, statements: 5 });
        // BEGIN and two inserts go with the read; the commit is the second round trip.
        assert.deepEqual(
          await roundTrips(async (tx) => {
            await write(tx, 'd');
            await write(tx, 'e');
            await probes(tx).selectFrom('write_behind_probe').select('id').execute();
          }),
          { roundTrips: 2, statements: 5 },
        );
      } finally {
        await db.destroy();
        await counter.close();
        await database.drop();
      }
    });
  });
}

describe('parameters written in as literals', () => {
  it('replaces $n outside quotes, quoted names, comments and dollar quotes only', () => {
    const text = `select $1, '$2', "$3", $$ $4 $$, $tag$ $5 $tag$, E'\\' $6', 'a''$7' -- $8\n, /* $9 */ $2`;
    assert.equal(
      inlineParameters(text, ['one', 'two']),
      `select 'one', '$2', "$3", $$ $4 $$, $tag$ $5 $tag$, E'\\' $6', 'a''$7' -- $8\n, /* $9 */ 'two'`,
    );
  });

  it('writes null, numbers, buffers and quotes as PostgreSQL reads them', () => {
    assert.equal(inlineParameters('$1 $2 $3 $4 $5', [null, 42, Buffer.from([0, 255]), "o'k", 'a\\b']), `NULL '42'  E'\\\\x00ff' 'o''k'  E'a\\\\b'`);
  });
});
