import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, eventually, rowCount, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

const entry = (i: number) => ({ from: 'Acme <a@example.com>', to: `user${i}@example.com`, subject: `Email #${i}`, text: `Body ${i}` });

for (const dialect of dialects) {
  describe(`POST /emails/batch (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    it('stores 100 emails and answers data[i] for entry i, as the SMTP server sees them', async () => {
      const entries = Array.from({ length: 100 }, (_, i) => entry(i));
      const { data, error } = await t.resend.batch.send(entries);
      assert.equal(error, null);
      assert.equal(data.data.length, 100);
      await eventually(() => smtp.messages.length === 100 || undefined);
      const byMessageId = new Map(smtp.messages.map((m) => [m.parsed.messageId!, m]));
      data.data.forEach(({ id }, i) => {
        const message = byMessageId.get(`<${id}@example.com>`)!;
        assert.equal(message.parsed.subject, `Email #${i}`);
        assert.deepEqual(message.to, [`user${i}@example.com`]);
      });
    });

    it('strict (the default): one invalid entry fails the request with its error, naming its index, and stores nothing', async () => {
      const before = await rowCount(t, 'emails');
      const entries = [entry(0), { ...entry(1), to: 'not-an-address' }, entry(2)];
      for (const options of [undefined, { batchValidation: 'strict' as const }]) {
        const { data, error } = await t.resend.batch.send(entries, options);
        assert.equal(data, null);
        assert.equal(error?.statusCode, 422);
        assert.equal(error?.name, 'validation_error');
        assert.match(error.message, /^Email at index 1: .*`to`/);
      }
      const missing = await t.resend.batch.send([entry(0), { to: 'x@example.com', subject: 's', text: 't' } as never]);
      assert.equal(missing.error?.name, 'missing_required_field');
      assert.match(missing.error.message, /^Email at index 1: Missing `from` field\.$/);
      assert.equal(await rowCount(t, 'emails'), before);
    });

    it('permissive: stores the valid entries and reports the others with their index', async () => {
      const before = await rowCount(t, 'emails');
      const entries = [entry(0), { ...entry(1), to: 'nope' }, entry(2), { ...entry(3), subject: 42 } as never];
      const { data, error } = await t.resend.batch.send(entries, { batchValidation: 'permissive' });
      assert.equal(error, null);
      assert.equal(data.data.length, 2);
      assert.deepEqual(data.errors.map((e) => e.index), [1, 3]);
      assert.match(data.errors[0]!.message, /`to`/);
      assert.match(data.errors[1]!.message, /`subject`/);
      assert.equal(await rowCount(t, 'emails'), before + 2);
      await eventually(() => smtp.messages.length === 2 || undefined);
      assert.deepEqual(smtp.messages.map((m) => m.parsed.subject).sort(), ['Email #0', 'Email #2']);
    });

    it('refuses attachments and scheduled_at in any entry, naming its index, in both modes', async () => {
      const withAttachment = [entry(0), { ...entry(1), attachments: [{ filename: 'a.txt', content: Buffer.from('a') }] }];
      const withSchedule = [entry(0), entry(1), { ...entry(2), scheduledAt: 'in 1 hour' }];
      const a = await t.resend.batch.send(withAttachment);
      assert.match(a.error!.message, /^Email at index 1: .*[Aa]ttachments/);
      const s = await t.resend.batch.send(withSchedule);
      assert.match(s.error!.message, /^Email at index 2: .*[Ss]chedul/);
      const p = await t.resend.batch.send(withSchedule, { batchValidation: 'permissive' });
      assert.deepEqual(p.data!.errors.map((e) => e.index), [2]);
    });

    it('refuses an empty array, a non-array and 101 entries with 422', async () => {
      for (const body of ['[]', '{"from":"a@example.com"}', '"x"', JSON.stringify(Array.from({ length: 101 }, (_, i) => entry(i)))]) {
        const response = await t.fetch('/emails/batch', { method: 'POST', headers: { 'content-type': 'application/json' }, body });
        assert.equal(response.status, 422, body.slice(0, 30));
        assert.equal(((await response.json()) as { name: string }).name, 'validation_error');
      }
      const header = await t.fetch('/emails/batch', {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-batch-validation': 'lenient' },
        body: JSON.stringify([entry(0)]),
      });
      assert.equal(header.status, 422);
    });

    it('is open to sending_access keys', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'batch sender', permission: 'sending_access' });
      const sender = new Resend(data!.token, { baseUrl: t.url });
      assert.equal((await sender.batch.send([entry(0)])).error, null);
    });
  });
}
