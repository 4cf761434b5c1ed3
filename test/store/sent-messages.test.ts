import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { KyselyPlugin, RootOperationNode } from 'kysely';
import { findSentMessage, saveSentMessage } from '../../src/store/emails.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';

// The message an email was sent as (store/emails.ts, saveSentMessage): a later attempt's replaces it,
// on either database, through the conflict rule's excluded row.

for (const dialect of dialects) {
  describe(`the message sent (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect);
    });
    after(() => t.close());

    it('binds the message once, and keeps the latest attempt\'s message and time', async () => {
      const { data, error } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.net', subject: 'sent', text: 'first' });
      assert.equal(error, null);
      const first = await eventually(() => findSentMessage(t.ctx.db, data.id));
      assert.match(first.toString(), /first/);
      const again = Buffer.from('Subject: sent\r\n\r\nsecond attempt\r\n');
      // The statement as compiled for this database: the message is bound once, the update reads excluded.raw.
      const seen: RootOperationNode[] = [];
      const spy: KyselyPlugin = { transformQuery: ({ node }) => (seen.push(node), node), transformResult: async ({ result }) => result };
      await t.ctx.writer.transaction((tx) => saveSentMessage(tx.withPlugin(spy), data.id, again, '2026-11-29T12:00:00.000Z'));
      const compiled = t.ctx.db.getExecutor().compileQuery(seen[0]!, { queryId: 'sent-message' });
      assert.equal(compiled.parameters.filter((p) => Buffer.isBuffer(p)).length, 1, compiled.sql);
      assert.deepEqual(await findSentMessage(t.ctx.db, data.id), again);
      const row = await t.ctx.db.selectFrom('sent_messages').select('created_at').where('email_id', '=', data.id).executeTakeFirstOrThrow();
      assert.equal(row.created_at, '2026-11-29T12:00:00.000Z');
    });
  });
}
