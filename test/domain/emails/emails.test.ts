import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

const base = { from: 'Acme <hello@example.com>', to: 'user@example.com', subject: 'Hello', html: '<p>Hi</p>' };
const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');

/** A local file server for attachments[].path. */
async function startFileServer(): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    if (req.url === '/logo.png') return res.end(png);
    if (req.url === '/moved') return res.writeHead(302, { location: '/logo.png' }).end();
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

for (const dialect of dialects) {
  describe(`POST /emails and GET /emails/:id (${dialect})`, () => {
    let t: TestApp;
    let files: { url: string; server: Server };
    before(async () => {
      t = await startApp(dialect, { worker: false, env: { MAILROOM_ALLOW_PRIVATE_ATTACHMENT_URLS: 'true' } });
      files = await startFileServer();
    });
    after(async () => {
      files.server.close();
      await t.close();
    });

    it('stores an email with every field and returns Resend’s email object', async () => {
      const { data, error } = await t.resend.emails.send({
        from: 'Acme Support <support@example.com>',
        to: ['one@example.com', 'Two <two@example.com>'],
        cc: 'cc@example.com',
        bcc: ['bcc@example.com'],
        replyTo: 'reply@example.com',
        subject: 'Your order',
        html: '<p>Thanks</p>',
        text: 'Thanks',
        headers: { 'X-Entity-Ref-ID': '123' },
        tags: [{ name: 'category', value: 'confirm_email' }],
      });
      assert.equal(error, null);
      assert.match(data.id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const { data: got } = await t.resend.emails.get(data.id);
      const { created_at, message_id, ...rest } = got as typeof got & { message_id: string };
      assert.match(created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);
      assert.equal(message_id, `<${data.id}@example.com>`);
      assert.deepEqual(rest, {
        object: 'email',
        id: data.id,
        from: 'Acme Support <support@example.com>',
        to: ['one@example.com', 'Two <two@example.com>'],
        cc: ['cc@example.com'],
        bcc: ['bcc@example.com'],
        reply_to: ['reply@example.com'],
        subject: 'Your order',
        html: '<p>Thanks</p>',
        text: 'Thanks',
        last_event: 'queued',
        scheduled_at: null,
        tags: [{ name: 'category', value: 'confirm_email' }],
      });
    });

    it('has the email, its recipients and its send job on disk when it answers', async () => {
      const { data } = await t.resend.emails.send({ ...base, cc: 'c@example.com', bcc: 'USER@example.com' });
      const db = t.ctx.db;
      assert.ok(await db.selectFrom('emails').where('id', '=', data!.id).selectAll().executeTakeFirst());
      const recipients = await db.selectFrom('email_recipients').select('address').where('email_id', '=', data!.id).execute();
      assert.deepEqual(recipients.map((r) => r.address).sort(), ['c@example.com', 'user@example.com'], 'one per address');
      const job = await db.selectFrom('jobs').selectAll().where('key', '=', `send-email:${data!.id}`).executeTakeFirst();
      assert.equal(job?.task, 'send-email');
    });

    it('sends through POST /email, /emails/sending and /email/sending as through POST /emails, idempotency keys shared', async () => {
      for (const path of ['/email', '/emails/sending', '/email/sending']) {
        const sent = await t.resend.post<{ id: string }>(path, { ...base, subject: `Via ${path}` });
        assert.equal(sent.error, null, path);
        assert.equal((await t.resend.emails.get(sent.data.id)).data?.subject, `Via ${path}`);
      }
      const sending = await t.resend.apiKeys.create({ name: 'alias sender', permission: 'sending_access' });
      const sender = new Resend(sending.data!.token, { baseUrl: t.url });
      // A sending-access key may use each; the same bytes with the same key are the same send on any of them.
      const first = await sender.post<{ id: string }>('/emails', { ...base, subject: 'Once' }, { idempotencyKey: 'alias-1' });
      const again = await sender.post<{ id: string }>('/email/sending', { ...base, subject: 'Once' }, { idempotencyKey: 'alias-1' });
      assert.equal(again.data?.id, first.data!.id, JSON.stringify(again.error));
    });

    it('returns 404 not_found for an unknown id', async () => {
      const { error } = await t.resend.emails.get('01a20048-3e5d-7704-8e81-b7cbb93e8fa1');
      assert.deepEqual(error, { statusCode: 404, name: 'not_found', message: 'Email not found' });
    });

    it('accepts `from` as addr or Name <addr>, quoted names, and internationalised domains', async () => {
      for (const from of ['plain@example.com', 'Name <n@example.com>', '"Doe, Jane" <jane@example.com>', 'Jürgen <j@bücher.de>']) {
        const { error } = await t.resend.emails.send({ ...base, from });
        assert.equal(error, null, from);
      }
      const { data } = await t.resend.emails.send({ ...base, to: 'kunde@bücher.de' });
      const recipients = await t.ctx.db.selectFrom('email_recipients').select('address').where('email_id', '=', data!.id).execute();
      assert.deepEqual(recipients, [{ address: 'kunde@xn--bcher-kva.de' }], 'the envelope carries the ASCII form');
    });

    it('refuses invalid addresses, line breaks in addresses, and more than 50 recipients', async () => {
      const bad = [
        'no-at-sign', 'a@b', 'two@@example.com', 'x@example.com\r\nRCPT TO:<evil@example.com>', 'Name <a@example.com', '',
        // Quoted local parts: RFC 5321's printable characters only, and no < or > (nodemailer rewrites them).
        '"a>b"@example.org', '"a<b"@example.org', '"tab\there"@example.org', '"é"@example.org',
      ];
      for (const address of bad) {
        for (const field of ['from', 'to', 'cc', 'bcc', 'reply_to']) {
          const response = await t.fetch('/emails', {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify({ ...base, [field]: address }),
          });
          assert.equal(response.status, 422, `${field}: ${JSON.stringify(address)}`);
        }
      }
      const many = Array.from({ length: 51 }, (_, i) => `u${i}@example.com`);
      const { error } = await t.resend.emails.send({ ...base, to: many });
      assert.equal(error?.name, 'validation_error');
      assert.match(error.message, /`to`.*50/);
      assert.equal((await t.resend.emails.send({ ...base, to: many.slice(0, 50) })).error, null);
    });

    it('needs html or text; keeps text null when omitted (generated at send) and "" when opted out', async () => {
      const { html: _, ...noBody } = base;
      const missing = await t.resend.emails.send(noBody as never);
      assert.equal(missing.error?.name, 'missing_required_field');
      const { data: generated } = await t.resend.emails.send(base);
      assert.equal((await t.resend.emails.get(generated!.id)).data!.text, null);
      const { data: none } = await t.resend.emails.send({ ...base, text: '' });
      assert.equal((await t.resend.emails.get(none!.id)).data!.text, '');
    });

    it('refuses headers with line breaks, bad names, or that Mailroom sets itself', async () => {
      const cases: Record<string, string>[] = [{ 'X-A': 'x\ny' }, { 'Bad Name': 'x' }, { 'X:Y': 'x' }, { Bcc: 'a@example.com' }, { 'content-type': 'text/plain' }];
      for (const headers of cases) {
        const { error } = await t.resend.emails.send({ ...base, headers });
        assert.equal(error?.name, 'validation_error', JSON.stringify(headers));
        assert.match(error.message, /`headers\./);
      }
    });

    it('checks tags: ASCII letters, digits, _ and -, at most 256 characters', async () => {
      assert.equal((await t.resend.emails.send({ ...base, tags: [{ name: 'a_b-C9', value: 'x'.repeat(256) }] })).error, null);
      for (const tag of [{ name: 'ü', value: 'v' }, { name: 'n', value: 'a.b' }, { name: 'x'.repeat(257), value: 'v' }]) {
        const { error } = await t.resend.emails.send({ ...base, tags: [tag] });
        assert.equal(error?.name, 'validation_error', JSON.stringify(tag).slice(0, 50));
      }
    });

    it('stores base64 attachments and fetches path attachments, following a redirect', async () => {
      const { data, error } = await t.resend.emails.send({
        ...base,
        attachments: [
          { filename: 'a.txt', content: Buffer.from('hello') },
          { path: `${files.url}/moved`, filename: 'logo.png', contentId: 'logo' },
          { path: `${files.url}/logo.png` },
        ],
      });
      assert.equal(error, null);
      const rows = await t.ctx.db.selectFrom('email_attachments').selectAll().where('email_id', '=', data.id).orderBy('position').execute();
      assert.deepEqual(
        rows.map((r) => [r.filename, Buffer.from(r.content).toString('hex'), r.content_id]),
        [
          ['a.txt', Buffer.from('hello').toString('hex'), null],
          ['logo.png', png.toString('hex'), 'logo'],
          ['logo.png', png.toString('hex'), null],
        ],
      );
    });

    it('refuses an attachment with neither content nor path, bad base64, or a path that fails', async () => {
      const cases = [
        [{ filename: 'x.txt' }, /`content` or `path`/],
        [{ filename: 'x.txt', content: '###' }, /base64/],
        [{ path: `${files.url}/missing.png` }, /404/],
        [{ path: 'ftp://example.com/x' }, /http/],
      ] as const;
      for (const [attachment, message] of cases) {
        const { error } = await t.resend.emails.send({ ...base, attachments: [attachment] });
        assert.equal(error?.name, 'invalid_attachment');
        assert.match(error.message, message);
      }
    });

    it('takes content as base64 or as an array of byte values (the Python SDK), and inline_content_id as content_id', async () => {
      const { status, body } = await requestJson(t, 'POST', '/emails', {
        ...base,
        attachments: [
          { filename: 'a.txt', content: [...Buffer.from('hello bytes')] },
          { filename: 'logo.png', content: png.toString('base64').replace(/(.{8})/g, '$1\n'), inline_content_id: 'logo' },
        ],
      });
      assert.equal(status, 200);
      const rows = await t.ctx.db.selectFrom('email_attachments').selectAll().where('email_id', '=', body.id).orderBy('position').execute();
      assert.deepEqual(
        rows.map((r) => [r.filename, Buffer.from(r.content).toString('hex'), r.content_id]),
        [
          ['a.txt', Buffer.from('hello bytes').toString('hex'), null],
          ['logo.png', png.toString('hex'), 'logo'],
        ],
      );
      const bad = await requestJson(t, 'POST', '/emails', { ...base, attachments: [{ filename: 'a.bin', content: [1, 256] }] });
      assert.equal(bad.status, 422);
    });

    it('refuses multipart and message attachment types, and more than 100 attachments', async () => {
      for (const type of ['multipart/mixed', 'message/rfc822', 'Multipart/Alternative; boundary=x']) {
        const { error } = await t.resend.emails.send({ ...base, attachments: [{ filename: 'x', content: 'aGk=', contentType: type }] });
        assert.equal(error?.name, 'validation_error', type);
        assert.match(error.message, /content_type/);
      }
      const many = Array.from({ length: 101 }, (_, i) => ({ filename: `${i}.txt`, content: 'aGk=' }));
      const { error } = await t.resend.emails.send({ ...base, attachments: many });
      assert.match(error!.message, /`attachments`.*at most 100/);
    });

    it('says why a remote attachment failed in general terms, never its URL nor the network error', async () => {
      const { error } = await t.resend.emails.send({ ...base, attachments: [{ path: 'http://user:s3cret@127.0.0.1:1/private/report.pdf' }] });
      assert.equal(error?.name, 'invalid_attachment');
      assert.match(error.message, /`attachments\[0\]\.path`.*refused/);
      assert.doesNotMatch(error.message, /s3cret|user|127\.0\.0\.1|report|ECONNREFUSED/);
    });

    it('lists emails with their message_id, as Resend does', async () => {
      const { data } = await t.resend.emails.send(base);
      const { data: list } = await t.resend.emails.list({ limit: 5 });
      const row = list!.data.find((e) => e.id === data!.id) as { message_id?: string } | undefined;
      assert.match(row?.message_id ?? '', new RegExp(`^<${data!.id}@example\\.com>$`));
    });

    it('caps all attachments together at 40 MB counted as base64', async () => {
      const content = 'A'.repeat(20 * 1024 * 1024);
      const { error } = await t.resend.emails.send({
        ...base,
        attachments: [
          { filename: 'a.bin', content },
          { filename: 'b.bin', content: `${content}AAAA` },
        ],
      });
      assert.equal(error?.name, 'invalid_attachment');
      assert.match(error.message, /40 MB/);
    });
  });

  describe(`attachment URLs and private addresses (${dialect})`, () => {
    it('refuses loopback, private and link-local addresses unless configured', async () => {
      const t = await startApp(dialect, { worker: false });
      const files = await startFileServer();
      try {
        for (const path of [
          `${files.url}/logo.png`,
          'http://localhost:1/x.png',
          'http://10.0.0.1/x.png',
          'http://169.254.169.254/latest/meta-data',
          'http://[::1]/x.png',
          'http://[::ffff:127.0.0.1]/x.png',
          'http://[::a9fe:a9fe]/latest/meta-data',
        ]) {
          const { error } = await t.resend.emails.send({ ...base, attachments: [{ path }] });
          assert.equal(error?.name, 'invalid_attachment', path);
          assert.match(error.message, /private/, path);
        }
      } finally {
        files.server.close();
        await t.close();
      }
    });
  });
}
