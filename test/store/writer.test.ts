import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_PROJECT_ID } from '../../src/store/projects.ts';
import { closeContext, createContext, type Context } from '../../src/context.ts';
import { readConfig } from '../../src/config.ts';
import { isUniqueViolation, writeLockOf, type Tx } from '../../src/store/db.ts';
import { createTestDatabase, dialects, eventually, TEST_ENV, type TestDatabase } from '../support/harness.ts';

const key = (i: number) => ({
  project_id: DEFAULT_PROJECT_ID,
  id: `key-${i}`,
  name: `k${i}`,
  token_hash: `hash-${i}`,
  permission: 'full_access' as const,
  domain_id: null,
  created_at: '2026-01-01 00:00:00.000+00',
  last_used_at: null,
  configured: 0,
});

/** Which of the keys key-`from` to key-`from + count - 1` are stored. */
async function storedKeys(ctx: Context, from: number, count: number): Promise<string[]> {
  const ids = Array.from({ length: count }, (_, i) => `key-${from + i}`);
  return (await ctx.db.selectFrom('api_keys').select('id').where('id', 'in', ids).execute()).map((row) => row.id);
}

/** An email row and one attachment, as POST /emails stores them. */
function emailWithAttachment(id: string, content: Buffer) {
  return {
    emails: [
      {
        id,
        project_id: DEFAULT_PROJECT_ID,
        from: 'a@example.com',
        to: '["b@example.com"]',
        cc: '[]',
        bcc: '[]',
        reply_to: '[]',
        subject: 's',
        headers: null,
        tags: null,
        message_id: `<${id}@example.com>`,
        scheduled_at: null,
        last_event: 'queued',
        created_at: '2026-01-01 00:00:00.000+00',
        template_id: null,
        topic_id: null,
        broadcast_id: null,
        personalization: null,
      },
    ],
    email_attachments: [{ email_id: id, position: 0, filename: 'a.bin', content_type: null, content_id: null, content }],
  };
}

for (const dialect of dialects) {
  describe(`writer: transactions, group commit and inserts (${dialect})`, () => {
    let database: TestDatabase;
    let ctx: Context;
    before(async () => {
      database = await createTestDatabase(dialect);
      ctx = await createContext(readConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
    });
    after(async () => {
      await closeContext(ctx);
      await database.drop();
    });

    it('commits concurrent callers, and one failing caller fails alone', async () => {
      const results = await Promise.allSettled(
        Array.from({ length: 20 }, (_, i) =>
          ctx.writer.transaction(async (tx) => {
            await tx.insertInto('api_keys').values(key(i)).execute();
            if (i === 7) throw new Error('caller 7 fails');
            return i;
          }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        Array.from({ length: 20 }, (_, i) => (i === 7 ? 'rejected' : 'fulfilled')),
      );
      assert.equal((results[7] as PromiseRejectedResult).reason.message, 'caller 7 fails');
      assert.equal((results[3] as PromiseFulfilledResult<number>).value, 3);
      const rows = await ctx.db.selectFrom('api_keys').select('id').where('id', 'like', 'key-%').execute();
      assert.equal(rows.length, 19);
      assert.ok(!rows.some((r) => r.id === 'key-7'), 'the failed caller wrote nothing');
    });

    it('gives callers that arrive together one transaction, and a later caller the next', async () => {
      const together = await Promise.all(Array.from({ length: 10 }, () => ctx.writer.transaction(async (tx) => tx)));
      assert.equal(new Set(together).size, 1, 'ten callers of the same turn, one transaction');
      const later = await ctx.writer.transaction(async (tx) => tx);
      assert.notEqual(later, together[0]);
    });

    it('rolls back everything a failing caller wrote before it failed', async () => {
      await assert.rejects(
        ctx.writer.transaction(async (tx) => {
          await tx.insertInto('api_keys').values(key(100)).execute();
          await tx.insertInto('api_keys').values(key(100)).execute(); // duplicate key
        }),
        isUniqueViolation,
      );
      assert.equal(await ctx.db.selectFrom('api_keys').select('id').where('id', '=', 'key-100').executeTakeFirst(), undefined);
    });

    it('commits concurrent inserts; a duplicate fails alone, as a unique violation, and leaves nothing', async () => {
      await ctx.writer.insert({ api_keys: [key(999)] });
      const results = await Promise.allSettled(
        Array.from({ length: 50 }, (_, i) =>
          // Request 9 writes a new key, then one that exists already.
          ctx.writer.insert({ api_keys: i === 9 ? [key(1009), key(999)] : [key(1000 + i)] }),
        ),
      );
      assert.deepEqual(
        results.map((r) => r.status),
        Array.from({ length: 50 }, (_, i) => (i === 9 ? 'rejected' : 'fulfilled')),
      );
      assert.ok(isUniqueViolation((results[9] as PromiseRejectedResult).reason));
      const ids = await storedKeys(ctx, 1000, 50);
      assert.equal(ids.length, 49);
      assert.ok(!ids.includes('key-1009'), 'the failed request wrote nothing');
    });

    it('refuses a value the database cannot store, and goes on working', async () => {
      // SQLite's insert thread cannot be sent it; Kysely cannot make a parameter of it for PostgreSQL.
      const refusal = dialect === 'sqlite' ? { name: 'DataCloneError' } : { name: 'TypeError' };
      await assert.rejects(ctx.writer.insert({ api_keys: [{ ...key(3000), name: (() => 'x') as unknown as string }] }), refusal);
      await ctx.writer.insert({ api_keys: [key(3001)] });
      assert.ok(await ctx.db.selectFrom('api_keys').select('id').where('id', '=', 'key-3001').executeTakeFirst());
    });

    it('stores attachment bytes as given', async () => {
      const bytes = Array.from({ length: 70_000 }, (_, i) => (i * 7) % 256);
      // The insert may move the buffer's memory to its thread rather than copy it: compare with a copy.
      await ctx.writer.insert(emailWithAttachment('email-blob', Buffer.from(bytes)));
      const row = await ctx.db.selectFrom('email_attachments').select('content').where('email_id', '=', 'email-blob').executeTakeFirstOrThrow();
      assert.ok(Buffer.from(row.content).equals(Buffer.from(bytes)));
    });

    it('runs inserts and transactions side by side without either failing', async () => {
      await ctx.writer.insert({ api_keys: [key(2000)] });
      const work = Array.from({ length: 200 }, (_, i) =>
        i % 4 === 0
          ? ctx.writer.transaction((tx) => tx.updateTable('api_keys').set({ name: `n${i}` }).where('id', '=', 'key-2000').execute())
          : ctx.writer.insert({ api_keys: [key(2001 + i)] }),
      );
      await Promise.all(work);
      assert.equal((await storedKeys(ctx, 2000, 201)).length, 151);
    });
  });
}

describe('write lock (sqlite)', () => {
  let database: TestDatabase;
  let ctx: Context;
  before(async () => {
    database = await createTestDatabase('sqlite');
    ctx = await createContext(readConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
  });
  after(async () => {
    await closeContext(ctx);
    await database.drop();
  });

  it('holds back writes, in transactions and alone, until it is released', async () => {
    await ctx.writer.insert({ api_keys: [key(3999)] }); // the insert thread is up and running
    const lock = writeLockOf(ctx.db)!;
    await lock.acquire();
    // Reads need no lock in WAL mode.
    assert.deepEqual(await storedKeys(ctx, 4000, 3), []);
    const done: string[] = [];
    const writes = [
      ctx.writer.transaction((tx) => tx.insertInto('api_keys').values(key(4000)).execute()).then(() => done.push('transaction')),
      ctx.db.insertInto('api_keys').values(key(4001)).execute().then(() => done.push('alone')),
      ctx.writer.insert({ api_keys: [key(4002)] }).then(() => done.push('insert')),
    ];
    // Both connections wait for the lock: the event loop's for the transaction (the write alone waits
    // behind it for the connection), and the insert thread's. notify counts the waiters it wakes; each
    // finds the lock still held and waits again.
    const word = new Int32Array(lock.buffer);
    await eventually(() => Atomics.notify(word, 0) === 2 || done.length > 0);
    assert.deepEqual(done, [], 'nothing was written while another held the lock');
    lock.release();
    await Promise.all(writes);
    assert.deepEqual((await storedKeys(ctx, 4000, 3)).sort(), ['key-4000', 'key-4001', 'key-4002']);
  });
});

describe('group commit across processes (postgres)', { skip: !dialects.includes('postgres') }, () => {
  let database: TestDatabase;
  let first: Context;
  let second: Context;
  before(async () => {
    database = await createTestDatabase('postgres');
    first = await createContext(readConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
    second = await createContext(readConfig({ ...TEST_ENV, DATABASE_URL: database.url }));
    await first.writer.insert({ api_keys: [key(1), key(2)] });
  });
  after(async () => {
    await closeContext(first);
    await closeContext(second);
    await database.drop();
  });

  it('ends a deadlock between two groups, and every caller commits', async () => {
    const rename = (tx: Tx, id: string, name: string) => tx.updateTable('api_keys').set({ name }).where('id', '=', id).execute();
    let lockedA!: () => void;
    let lockedB!: () => void;
    const aLocked = new Promise<void>((resolve) => (lockedA = resolve));
    const bLocked = new Promise<void>((resolve) => (lockedB = resolve));
    // Each group locks one row, waits for the other group's lock, then asks for the other's row.
    const results = await Promise.allSettled([
      first.writer.transaction(async (tx) => {
        await rename(tx, 'key-1', 'first');
        lockedA();
        await bLocked;
      }),
      first.writer.transaction((tx) => rename(tx, 'key-2', 'first')),
      second.writer.transaction(async (tx) => {
        await rename(tx, 'key-2', 'second');
        lockedB();
        await aLocked;
      }),
      second.writer.transaction((tx) => rename(tx, 'key-1', 'second')),
    ]);
    assert.deepEqual(
      results.map((r) => r.status),
      ['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'],
    );
    const names = await first.db.selectFrom('api_keys').select('name').where('id', 'in', ['key-1', 'key-2']).execute();
    assert.equal(names.length, 2);
  });
});
