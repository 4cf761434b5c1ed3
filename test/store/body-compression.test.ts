import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { eventually, startApp, type TestApp } from '../support/harness.ts';

// On PostgreSQL, bodies and messages compress with lz4 where the server has it (migration 0040): pglz
// cost the server 6% of its CPU on the send path.

describe('bodies compressed with lz4 (postgres)', { skip: !process.env.TEST_DATABASE_URL }, () => {
  let t: TestApp;
  before(async () => {
    t = await startApp('postgres');
  });
  after(() => t.close());

  it('stores an email body and its message as sent with lz4', async () => {
    const { rows: methods } = await sql<{ enumvals: string[] }>`
      select enumvals from pg_settings where name = 'default_toast_compression'`.execute(t.ctx.db);
    assert.ok(methods[0]!.enumvals.includes('lz4'), 'this server has lz4, as Debian builds it');
    const html = `<p>${Array.from({ length: 4000 }, (_, i) => `word${i % 97}`).join(' ')}</p>`;
    const { data, error } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.net', subject: 'big', html });
    assert.equal(error, null);
    await eventually(() => t.ctx.db.selectFrom('sent_messages').select('email_id').where('email_id', '=', data.id).executeTakeFirst());
    const { rows } = await sql<{ body: string; message: string }>`
      select pg_column_compression(c.html) as body, pg_column_compression(s.raw) as message
      from email_contents c join sent_messages s on s.email_id = c.email_id where c.email_id = ${data.id}`.execute(t.ctx.db);
    assert.deepEqual(rows, [{ body: 'lz4', message: 'lz4' }]);
  });
});
