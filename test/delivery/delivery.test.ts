import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { simpleParser } from 'mailparser';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { nothingLeftToDo } from '../support/jobs.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const png = Buffer.from('89504e470d0a1a0a0000000d4948445200000001', 'hex');
const base = { from: 'Acme <hello@example.com>', subject: 'Hello', html: '<p>Hello <b>there</b></p>' };

async function lastEvent(t: TestApp, id: string, event: string) {
  return eventually(async () => (await t.resend.emails.get(id)).data?.last_event === event || undefined);
}

async function events(t: TestApp, id: string): Promise<{ type: string; recipient: string | null; response: string | null }[]> {
  return ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: never[] }).data;
}

for (const dialect of dialects) {
  describe(`delivery through an SMTP relay (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, RELAY_ENVELOPE_SENDER: 'verp', WORKER_MAX_ATTEMPTS: '3' } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
      smtp.onRecipient = () => undefined;
      smtp.onMessage = () => undefined;
    });

    it('delivers every field intact: names, Cc, Reply-To, headers, text part, attachments, inline image, tags', async () => {
      const { data } = await t.resend.emails.send({
        from: 'Acme Support <support@example.com>',
        to: ['Jane Doe <jane@example.com>', 'bob@example.com'],
        cc: 'carol@example.com',
        bcc: 'secret@example.com',
        replyTo: 'replies@example.com',
        subject: 'Your order ✓',
        html: '<h1>Thanks!</h1><p>Your order <b>#42</b> ships today.</p><img src="cid:logo">',
        headers: { 'X-Entity-Ref-ID': 'order-42', 'List-Unsubscribe': '<https://example.com/u>' },
        tags: [{ name: 'category', value: 'order' }, { name: 'plan', value: 'pro' }],
        attachments: [
          { filename: 'invoice.pdf', content: Buffer.from('%PDF-1.4 fake') },
          { filename: 'logo.png', content: png, contentId: 'logo' },
        ],
      });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(smtp.messages.map((m) => m.to).flat().sort(), ['bob@example.com', 'carol@example.com', 'jane@example.com', 'secret@example.com'], 'one SMTP transaction per recipient');
      const senders = smtp.messages.map((m) => m.from);
      for (const sender of senders) assert.match(sender, /^bounces\+[0-9a-f]{48}@/, 'a VERP envelope sender');
      assert.equal(new Set(senders).size, 4, 'one of its own for each recipient');
      const message = smtp.messages.find((m) => m.to[0] === 'jane@example.com');

      const mail = message!.parsed;
      assert.deepEqual(mail.from!.value, [{ address: 'support@example.com', name: 'Acme Support' }]);
      assert.deepEqual((mail.to as { value: unknown[] }).value, [
        { address: 'jane@example.com', name: 'Jane Doe' },
        { address: 'bob@example.com', name: '' },
      ]);
      assert.equal((mail.cc as { text: string }).text, 'carol@example.com');
      assert.equal(mail.bcc, undefined);
      assert.doesNotMatch(message!.raw.toString(), /secret@example\.com/, 'Bcc exists only in the envelope');
      assert.equal((mail.replyTo as { text: string }).text, 'replies@example.com');
      assert.equal(mail.subject, 'Your order ✓');
      assert.ok(mail.date instanceof Date);
      const { data: stored } = await t.resend.emails.get(data!.id);
      assert.equal(mail.messageId, (stored as { message_id: string }).message_id);
      assert.equal(mail.headers.get('x-entity-ref-id'), 'order-42');
      assert.doesNotMatch(message!.raw.toString(), /category|plan=pro|x-mailroom-tags/i, 'tags never reach the recipient');
      assert.match(mail.html as string, /<b>#42<\/b>/);
      assert.match(mail.text!, /THANKS!/);
      assert.match(mail.text!, /Your order #42 ships today\./);
      assert.match(message!.raw.toString(), /multipart\/alternative/);
      assert.match(message!.raw.toString(), /multipart\/related/);

      const invoice = mail.attachments.find((a) => a.filename === 'invoice.pdf')!;
      assert.equal(invoice.contentType, 'application/pdf');
      assert.equal(invoice.content.toString(), '%PDF-1.4 fake');
      const logo = mail.attachments.find((a) => a.filename === 'logo.png')!;
      assert.equal(logo.contentType, 'image/png');
      assert.equal(logo.cid, 'logo');
      assert.equal(logo.related, true);
      assert.deepEqual(logo.content, png);

      const recorded = await events(t, data!.id);
      assert.deepEqual(
        recorded.filter((e) => e.recipient === 'jane@example.com').map((e) => e.type),
        ['sent', 'delivered'],
      );
      assert.match(recorded[0]!.response!, /^250/);
    });

    it('sends no text part when text is "", and the given text otherwise', async () => {
      const { data: none } = await t.resend.emails.send({ ...base, to: 'a@example.com', text: '' });
      const { data: given } = await t.resend.emails.send({ ...base, to: 'b@example.com', text: 'Plain words' });
      await lastEvent(t, none!.id, 'delivered');
      await lastEvent(t, given!.id, 'delivered');
      const byTo = (to: string) => smtp.messages.find((m) => m.to.includes(to))!;
      assert.doesNotMatch(byTo('a@example.com').raw.toString(), /text\/plain/);
      assert.match(byTo('a@example.com').raw.toString(), /text\/html/);
      assert.equal(byTo('b@example.com').parsed.text?.trim(), 'Plain words');
    });

    it('keeps header injection out: header values and names are encoded, never raw', async () => {
      const { data } = await t.resend.emails.send({
        ...base,
        to: 'a@example.com',
        subject: 'Hi\r\nBcc: victim@example.com',
        headers: { 'X-Note': 'ünïcödé value' },
      });
      await lastEvent(t, data!.id, 'delivered');
      const [message] = smtp.messages;
      assert.deepEqual(message!.to, ['a@example.com']);
      assert.equal(message!.parsed.subject, 'Hi Bcc: victim@example.com');
      // Non-ASCII is carried as an RFC 2047 encoded word, never as raw bytes.
      assert.equal(message!.parsed.headers.get('x-note'), '=?UTF-8?Q?=C3=BCn=C3=AFc=C3=B6d=C3=A9_value?=');
      assert.doesNotMatch(message!.raw.toString(), /^Bcc:/m);
    });

    it('retries a 4xx with backoff (delivery_delayed), then delivers with the same Message-ID', async () => {
      const seen: string[] = [];
      smtp.onMessage = (m) => {
        seen.push(m.parsed.messageId!);
        return seen.length === 1 ? { code: 451, message: '4.3.0 Try again later' } : undefined;
      };
      const { data } = await t.resend.emails.send({ ...base, to: 'slow@example.com' });
      await lastEvent(t, data!.id, 'delivery_delayed');
      assert.equal(smtp.messages.length, 0);
      t.advance(3_000); // exp(1) s after the first attempt
      await lastEvent(t, data!.id, 'delivered');
      assert.equal(seen.length, 2);
      assert.equal(seen[0], seen[1]);
      const types = (await events(t, data!.id)).map((e) => e.type);
      assert.deepEqual(types, ['delivery_delayed', 'sent', 'delivered']);
      assert.match((await events(t, data!.id))[0]!.response!, /451/);
    });

    it('bounces on 5xx, per recipient: the others are still delivered; the bounced address is suppressed', async () => {
      smtp.onRecipient = (address) => (address === 'gone@example.com' ? { code: 550, message: '5.1.1 No such user' } : undefined);
      const { data } = await t.resend.emails.send({ ...base, to: ['gone@example.com', 'here@example.com'] });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(smtp.messages.map((m) => m.to), [['here@example.com']]);
      const recorded = await events(t, data!.id);
      const bounce = recorded.find((e) => e.recipient === 'gone@example.com')!;
      assert.equal(bounce.type, 'bounced');
      assert.match(bounce.response!, /550/);

      const { data: entry } = await t.resend.suppressions.get('gone@example.com');
      assert.deepEqual([entry?.origin, entry?.source_id], ['bounce', data!.id]);
      const { data: only } = await t.resend.emails.send({ ...base, to: 'gone@example.com' });
      await lastEvent(t, only!.id, 'suppressed');
      assert.deepEqual(smtp.messages.map((m) => m.to), [['here@example.com']], 'never sent again');
    });

    it('matches what the relay said to each recipient by position, whatever form nodemailer gave the address', async () => {
      // nodemailer writes "quoted"@example.com without its quotes; the relay's answer is still this recipient's.
      const { data } = await t.resend.emails.send({ ...base, to: ['"quoted"@example.com', 'plain@example.com'] });
      await lastEvent(t, data!.id, 'delivered');
      assert.deepEqual(smtp.messages.slice(-2).map((m) => m.to[0]).sort(), ['plain@example.com', 'quoted@example.com']);
      const statuses = await t.ctx.db.selectFrom('email_recipients').select(['address', 'status']).where('email_id', '=', data!.id).orderBy('address').execute();
      assert.deepEqual(statuses, [
        { address: '"quoted"@example.com', status: 'delivered' },
        { address: 'plain@example.com', status: 'delivered' },
      ]);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `send-email:${data!.id}`).executeTakeFirst(), undefined);
    });

    it('bounces the whole message on a 5xx after DATA', async () => {
      smtp.onMessage = () => ({ code: 554, message: '5.7.1 Message rejected' });
      const { data } = await t.resend.emails.send({ ...base, to: 'x@example.com' });
      await lastEvent(t, data!.id, 'bounced');
    });

    it('waits for scheduled_at, and sends when the clock reaches it', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'later@example.com', scheduledAt: 'in 1 hour' });
      const { data: got } = await t.resend.emails.get(data!.id);
      assert.equal(got!.last_event, 'scheduled');
      assert.match(got!.scheduled_at!, /\+00$/);
      await nothingLeftToDo(t);
      assert.equal(smtp.messages.length, 0);
      t.advance(3600_000 + 1000);
      await lastEvent(t, data!.id, 'delivered');
      assert.equal(smtp.messages.length, 1);
    });

    it('reschedules with PATCH and cancels with POST /cancel while still scheduled, else 422', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'moved@example.com', scheduledAt: 'in 2 hours' });
      const moved = await t.resend.emails.update({ id: data!.id, scheduledAt: 'in 10 minutes' });
      assert.deepEqual(moved.data, { object: 'email', id: data!.id });
      t.advance(11 * 60_000);
      await lastEvent(t, data!.id, 'delivered');

      const { data: other } = await t.resend.emails.send({ ...base, to: 'never@example.com', scheduledAt: 'in 1 hour' });
      assert.deepEqual((await t.resend.emails.cancel(other!.id)).data, { object: 'email', id: other!.id });
      assert.equal((await t.resend.emails.get(other!.id)).data!.last_event, 'canceled');
      t.advance(2 * 3600_000);
      await nothingLeftToDo(t);
      assert.ok(!smtp.messages.some((m) => m.to.includes('never@example.com')), 'the canceled email was not sent');

      for (const call of [() => t.resend.emails.cancel(data!.id), () => t.resend.emails.update({ id: data!.id, scheduledAt: 'in 1 hour' })]) {
        const { error } = await call();
        assert.equal(error?.statusCode, 422);
        assert.equal(error?.name, 'validation_error');
      }
    });

    it('refuses a schedule in the past or more than 30 days ahead', async () => {
      for (const scheduledAt of ['2020-01-01T00:00:00Z', 'in 31 days']) {
        const { error } = await t.resend.emails.send({ ...base, to: 'a@example.com', scheduledAt });
        assert.equal(error?.name, 'validation_error', scheduledAt);
        assert.match(error.message, /scheduled_at/);
      }
      const { error } = await t.resend.emails.send({ ...base, to: 'a@example.com', scheduledAt: 'tomorrow at 9am' });
      assert.equal(error, null);
    });

    it('simulates Resend’s test addresses without contacting any server', async () => {
      let connections = 0;
      smtp.onRecipient = () => {
        connections++;
        return undefined;
      };
      const cases = {
        'delivered@resend.dev': ['sent', 'delivered'],
        'delivered+signup@resend.dev': ['sent', 'delivered'],
        'bounced@resend.dev': ['sent', 'bounced'],
        'bounced+x@resend.dev': ['sent', 'bounced'],
        'complained@resend.dev': ['sent', 'delivered', 'complained'],
        'suppressed@resend.dev': ['suppressed'],
      };
      for (const [to, expected] of Object.entries(cases)) {
        const { data } = await t.resend.emails.send({ ...base, to });
        await lastEvent(t, data!.id, expected.at(-1)!);
        assert.deepEqual((await events(t, data!.id)).map((e) => e.type), expected, to);
      }
      const { data: bounced } = await t.resend.emails.send({ ...base, to: 'bounced@resend.dev' });
      await lastEvent(t, bounced!.id, 'bounced');
      assert.match((await events(t, bounced!.id)).at(-1)!.response!, /^550 5\.1\.1/);
      assert.equal(connections, 0);
      assert.equal(smtp.messages.length, 0);
    });
  });

  describe(`relay connection options (${dialect})`, () => {
    it('upgrades with STARTTLS when the relay offers it, and authenticates with the URL’s user:pass', async () => {
      const smtp = await startSmtpServer({
        disabledCommands: [],
        authOptional: false,
        onAuth(auth, _session, callback) {
          const ok = auth.username === 'mailer' && auth.password === 'p@ss word';
          callback(ok ? null : new Error('Invalid credentials'), ok ? { user: auth.username } : undefined);
        },
      });
      // The test server's certificate is self-signed: SMTP_URL's query passes nodemailer options through.
      const url = `smtp://mailer:${encodeURIComponent('p@ss word')}@127.0.0.1:${smtp.port}?tls.rejectUnauthorized=false`;
      const t = await startApp(dialect, { env: { SMTP_URL: url } });
      try {
        const { data } = await t.resend.emails.send({ ...base, to: 'a@example.com' });
        await lastEvent(t, data!.id, 'delivered');
        assert.equal(smtp.messages[0]!.secure, true);
        assert.equal(smtp.messages[0]!.user, 'mailer');
      } finally {
        await t.close();
        await smtp.close();
      }
    });
  });

  describe(`a relay that is down (${dialect})`, () => {
    it('delays with backoff and finally fails when the attempts run out', async () => {
      const t = await startApp(dialect, { env: { SMTP_URL: 'smtp://127.0.0.1:1', WORKER_MAX_ATTEMPTS: '3' } });
      try {
        const { data } = await t.resend.emails.send({ ...base, to: 'a@example.com' });
        await lastEvent(t, data!.id, 'delivery_delayed');
        t.advance(3_000);
        await eventually(async () => (await events(t, data!.id)).length === 2 || undefined);
        t.advance(8_000);
        await lastEvent(t, data!.id, 'failed');
        assert.deepEqual((await events(t, data!.id)).map((e) => e.type), ['delivery_delayed', 'delivery_delayed', 'failed']);
        assert.equal(await t.ctx.db.selectFrom('jobs').select('id').executeTakeFirst(), undefined, 'the job is done');
      } finally {
        await t.close();
      }
    });
  });

  describe(`capture mode (${dialect})`, () => {
    it('stores the raw message, marks it delivered, and serves it at GET /emails/:id/raw', async () => {
      const t = await startApp(dialect);
      try {
        const { data } = await t.resend.emails.send({ ...base, to: 'someone@example.com', text: 'Hello there' });
        await lastEvent(t, data!.id, 'delivered');
        const response = await t.fetch(`/emails/${data!.id}/raw`);
        const body = (await response.json()) as { object: string; raw: string };
        assert.equal(body.object, 'captured_email');
        const mail = await simpleParser(body.raw);
        assert.equal(mail.subject, 'Hello');
        assert.equal(mail.text?.trim(), 'Hello there');
        assert.match((await events(t, data!.id)).at(-1)!.response!, /capture/i);
      } finally {
        await t.close();
      }
    });

    it('serves the message itself, as a .eml download, to `Accept: message/rfc822`; JSON to anyone else', async () => {
      const t = await startApp(dialect);
      try {
        const { data } = await t.resend.emails.send({ ...base, to: 'someone@example.com', subject: 'Grüße ✓', text: 'Hello there' });
        await lastEvent(t, data!.id, 'delivered');
        const path = `/emails/${data!.id}/raw`;
        const json = (await (await t.fetch(path)).json()) as { raw: string };
        for (const accept of ['message/rfc822', 'application/json;q=0.5, message/rfc822']) {
          const response = await t.fetch(path, { headers: { accept } });
          assert.equal(response.status, 200);
          assert.equal(response.headers.get('content-type'), 'message/rfc822');
          assert.equal(response.headers.get('content-disposition'), `attachment; filename="${data!.id}.eml"`);
          const raw = Buffer.from(await response.arrayBuffer());
          assert.equal(raw.toString('utf8'), json.raw, 'the same message, byte for byte');
          assert.equal((await simpleParser(raw)).subject, 'Grüße ✓');
        }
        for (const accept of ['application/json', '*/*', 'message/*', 'application/json, message/rfc822;q=0.9']) {
          const response = await t.fetch(path, { headers: { accept } });
          assert.match(response.headers.get('content-type')!, /^application\/json/, accept);
          assert.equal(((await response.json()) as { raw: string }).raw, json.raw);
        }
        const missing = await t.fetch('/emails/0192e3a4-1111-7000-8000-000000000000/raw', { headers: { accept: 'message/rfc822' } });
        assert.equal(missing.status, 404);
        assert.equal(((await missing.json()) as { name: string }).name, 'not_found');
      } finally {
        await t.close();
      }
    });
  });
}
