import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { closeContext, createContext, type Context } from '../src/context.ts';
import { readConfig } from '../src/config.ts';
import { createTestDatabase, dialects, TEST_ENV, type TestDatabase } from './harness.ts';

const key = (i: number) => ({
  id: `key-${i}`,
  name: `k${i}`,
  token_hash: `hash-${i}`,
  permission: 'full_access' as const,
  domain_id: null,
  created_at: '2026-01-01 00:00:00.000+00',
  last_used_at: null,
});

for (const dialect of dialects) {
  describe(`writer: transactions and group commit (${dialect})`, () => {
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

    it('rolls back everything a failing caller wrote before it failed', async () => {
      await assert.rejects(
        ctx.writer.transaction(async (tx) => {
          await tx.insertInto('api_keys').values(key(100)).execute();
          await tx.insertInto('api_keys').values(key(100)).execute(); // duplicate key
        }),
      );
      assert.equal(await ctx.db.selectFrom('api_keys').select('id').where('id', '=', 'key-100').executeTakeFirst(), undefined);
    });
  });
}
