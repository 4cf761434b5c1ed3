import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { dialects, followLink, startApp, type TestApp } from '../../support/harness.ts';

const PUBLIC_URL = 'https://mail.example.com';
const base = { from: 'Acme <hello@example.com>', to: 'user@example.com', subject: 'Files', html: '<p><img src="cid:logo"></p>' };
const UUID_V8 = /^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

for (const dialect of dialects) {
  describe(`GET /emails/:id/attachments (${dialect})`, () => {
    let t: TestApp;
    let emailId: string;
    const logo = randomBytes(3000);
    const report = Buffer.from('a,b\r\n1,2\r\n');
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_PUBLIC_URL: `${PUBLIC_URL}/` } });
      const { data, error } = await t.resend.emails.send({
        ...base,
        attachments: [
          { filename: 'logo.png', content: logo.toString('base64'), contentId: 'logo' },
          { filename: 'Report "Q1" €.csv', content: report, contentType: 'text/csv; charset=utf-8' },
        ],
      });
      assert.equal(error, null);
      emailId = data.id;
    });
    after(() => t.close());

    it("lists an email's attachments in Resend's shape, in the order they were given", async () => {
      const before = t.clock.now();
      const { data, error } = await t.resend.emails.attachments.list({ emailId });
      assert.equal(error, null);
      assert.equal(data.object, 'list');
      assert.equal(data.has_more, false);
      const [first, second] = data.data;
      for (const item of data.data) {
        assert.match(item.id, UUID_V8);
        const expires = Date.parse(item.expires_at);
        assert.equal(item.expires_at, new Date(expires).toISOString());
        assert.ok(expires > before + 3599_000 && expires <= before + 3600_000, item.expires_at);
        assert.equal(new URL(item.download_url).searchParams.get('expires'), String(expires / 1000));
      }
      const { id: _, download_url: __, expires_at: ___, ...logoFacts } = first!;
      assert.deepEqual(logoFacts, { filename: 'logo.png', content_type: 'image/png', content_id: 'logo', content_disposition: 'inline', size: logo.length });
      const { id: _2, download_url: _3, expires_at: _4, ...reportFacts } = second!;
      assert.deepEqual(reportFacts, {
        filename: 'Report "Q1" €.csv',
        content_type: 'text/csv; charset=utf-8',
        content_id: null,
        content_disposition: 'attachment',
        size: report.length,
      });
      assert.notEqual(first!.id, second!.id);
      // Derived, not stored: the same on every read.
      assert.deepEqual((await t.resend.emails.attachments.list({ emailId })).data!.data.map((a) => a.id), [first!.id, second!.id]);
    });

    it('retrieves one attachment, and downloads exactly its bytes with no API key', async () => {
      const list = (await t.resend.emails.attachments.list({ emailId })).data!.data;
      for (const [item, bytes, served] of [[list[0]!, logo, 'image/png'], [list[1]!, report, 'application/octet-stream']] as const) {
        const { data, error } = await t.resend.emails.attachments.get({ emailId, id: item.id });
        assert.equal(error, null);
        assert.equal(data.object, 'attachment');
        assert.deepEqual({ ...data, download_url: '' }, { object: 'attachment', ...item, download_url: '' });
        assert.ok(data.download_url.startsWith(`${PUBLIC_URL}/downloads/email-attachment/`), data.download_url);
        const response = await followLink(t, data.download_url);
        assert.equal(response.status, 200);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), bytes);
        assert.equal(response.headers.get('content-type'), served, 'a CSV is served as bytes: only images, PDFs and plain text keep their type');
        assert.equal(response.headers.get('cache-control'), 'private, no-store');
        assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      }
      const logoFile = await followLink(t, list[0]!.download_url);
      assert.equal(logoFile.headers.get('content-disposition'), 'attachment; filename="logo.png"');
      const reportFile = await followLink(t, list[1]!.download_url);
      assert.equal(reportFile.headers.get('content-disposition'), `attachment; filename="Report _Q1_ _.csv"; filename*=UTF-8''Report%20%22Q1%22%20%E2%82%AC.csv`);
    });

    it('serves a file as bytes unless it is an image (not SVG), a PDF or plain text, whatever type the sender chose', async () => {
      const types = ['text/javascript', 'text/html', 'image/svg+xml', 'application/xhtml+xml', 'image/jpeg', 'application/pdf', 'text/plain; charset=utf-8'];
      const { data } = await t.resend.emails.send({
        ...base,
        attachments: types.map((contentType, i) => ({ filename: `f${i}`, content: Buffer.from('alert(1)').toString('base64'), contentType })),
      });
      const list = (await t.resend.emails.attachments.list({ emailId: data!.id })).data!.data;
      const served = await Promise.all(list.map(async (item) => (await followLink(t, item.download_url)).headers.get('content-type')));
      assert.deepEqual(served, ['application/octet-stream', 'application/octet-stream', 'application/octet-stream', 'application/octet-stream', 'image/jpeg', 'application/pdf', 'text/plain; charset=utf-8']);
    });

    it('pages by attachment id with limit, after and before', async () => {
      const all = (await t.resend.emails.attachments.list({ emailId })).data!.data.map((a) => a.id);
      const page = async (options: object) => {
        const { data, error } = await t.resend.emails.attachments.list({ emailId, ...options });
        assert.equal(error, null);
        return { has_more: data.has_more, ids: data.data.map((a) => a.id) };
      };
      assert.deepEqual(await page({ limit: 1 }), { has_more: true, ids: [all[0]] });
      assert.deepEqual(await page({ limit: 1, after: all[0] }), { has_more: false, ids: [all[1]] });
      assert.deepEqual(await page({ limit: 1, before: all[1] }), { has_more: false, ids: [all[0]] });
      assert.deepEqual(await page({ after: all[1] }), { has_more: false, ids: [] });
      const { error } = await t.resend.emails.attachments.list({ emailId, after: '0192e3a4-1111-7000-8000-000000000000' });
      assert.equal(error?.name, 'validation_error');
      assert.match(error.message, /`after`.*an item of this list/);
    });

    it('lists none for an email without attachments, and answers 404 for an unknown email or attachment', async () => {
      const { data: plain } = await t.resend.emails.send({ ...base, html: '<p>Hi</p>' });
      assert.deepEqual((await t.resend.emails.attachments.list({ emailId: plain!.id })).data, { object: 'list', has_more: false, data: [] });
      const unknown = '0192e3a4-1111-7000-8000-000000000000';
      const email = await t.resend.emails.attachments.list({ emailId: unknown });
      assert.deepEqual(email.error, { statusCode: 404, name: 'not_found', message: 'Email not found' });
      const attachment = await t.resend.emails.attachments.get({ emailId, id: unknown });
      assert.deepEqual(attachment.error, { statusCode: 404, name: 'not_found', message: 'Attachment not found' });
      const elsewhere = (await t.resend.emails.attachments.list({ emailId })).data!.data[0]!.id;
      const other = await t.resend.emails.attachments.get({ emailId: plain!.id, id: elsewhere });
      assert.equal(other.error?.message, 'Attachment not found', "another email's attachment id");
    });

    it('needs a full-access key', async () => {
      const sending = await t.resend.apiKeys.create({ name: 'sending', permission: 'sending_access' });
      const id = (await t.resend.emails.attachments.list({ emailId })).data!.data[0]!.id;
      for (const path of [`/emails/${emailId}/attachments`, `/emails/${emailId}/attachments/${id}`]) {
        const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${sending.data!.token}` } });
        assert.equal(response.status, 401, path);
        assert.equal(((await response.json()) as { name: string }).name, 'restricted_api_key');
        assert.equal((await fetch(`${t.url}${path}`)).status, 401, `${path} without a key`);
      }
    });
  });
}
