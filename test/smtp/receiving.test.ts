import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import nodemailer from 'nodemailer';
import { dialects, eventually, followLink, rowCount, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';
import { INLINE_BYTES } from '../../src/domain/receiving/message-reader.ts';

// The inbound SMTP server end to end: real SMTP clients (nodemailer) send, the official SDK reads
// back, a real HTTP receiver takes the webhooks.

const MAX_BYTES = 300_000;
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

const idOf = (response: string) => /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response)?.[1];

/** A raw connection to the server and its first line (the greeting, or a refusal). */
function greeting(port: number): Promise<{ socket: Socket; line: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('error', reject);
    socket.once('data', (chunk) => resolve({ socket, line: chunk.toString().split('\r\n')[0]! }));
  });
}

for (const dialect of dialects) {
  describe(`receiving over SMTP (${dialect})`, () => {
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let hooks: WebhookReceiver;

    before(async () => {
      hooks = await startWebhookReceiver();
      t = await startApp(dialect, {
        env: {
          ...INBOUND_ENV,
          INBOUND_MAX_MESSAGE_BYTES: String(MAX_BYTES),
          INBOUND_MAX_RECIPIENTS: '3',
          INBOUND_MAX_CONNECTIONS_PER_CLIENT: '3',
          MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
        },
      });
      inbound = await startInbound(t);
      await receivingDomain(t, 'inbox.test');
      await t.resend.domains.create({ name: 'sendonly.test' });
      await t.resend.webhooks.create({ endpoint: hooks.url, events: ['email.received'] });
    });
    after(async () => {
      await inbound.close();
      await t.close();
      await hooks.close();
    });

    it('stores html, text, cc, an inline image and two attachments; the API and its download links give them back byte for byte; a webhook tells the application', async () => {
      const pdf = randomBytes(50_000);
      const notes = Buffer.from('line one\r\nline two\r\n');
      const message = {
        from: 'Ada <ada@sender.test>',
        to: 'Support <support@inbox.test>',
        cc: ['copy@elsewhere.test'],
        replyTo: 'replies@sender.test',
        subject: 'Invoice 42 – ünïcode',
        text: 'See the attached invoice.',
        html: '<p>See the invoice.</p><img src="cid:logo@sender.test">',
        headers: { 'X-Custom': 'custom value' },
        attachments: [
          { filename: 'logo.png', content: PNG, cid: 'logo@sender.test', contentType: 'image/png' },
          { filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' },
          { filename: 'notes.txt', content: notes, contentType: 'text/plain' },
        ],
      };
      // Built first and sent as is, so that what arrives can be compared with what was sent.
      const built = await new Promise<Buffer>((resolve, reject) =>
        nodemailer.createTransport({ streamTransport: true, buffer: true }).sendMail(message, (e, info) => (e ? reject(e) : resolve(info.message as Buffer))),
      );
      assert.ok(built.length > INLINE_BYTES, 'this one is read on the reader thread; the smaller ones of the other tests in place');
      const sent = await sendTo(inbound.port, { envelope: { from: 'ada@sender.test', to: ['support@inbox.test'] }, raw: built });
      const id = idOf(sent.response);
      assert.ok(id, sent.response);

      const { data: email, error } = await t.resend.emails.receiving.get(id);
      assert.equal(error, null);
      assert.equal(email.from, 'ada@sender.test');
      assert.deepEqual(email.to, ['support@inbox.test']);
      assert.deepEqual(email.cc, ['copy@elsewhere.test']);
      assert.deepEqual(email.reply_to, ['replies@sender.test']);
      assert.deepEqual(email.received_for, ['support@inbox.test']);
      assert.equal(email.subject, 'Invoice 42 – ünïcode');
      assert.equal(email.text!.trim(), 'See the attached invoice.');
      assert.match(email.html!, /src="data:image\/png;base64,/);
      assert.equal(email.headers!['x-custom'], 'custom value');
      assert.match(email.headers!.received!, /by .* \(Mailroom\) with ESMTPS id /);
      assert.match(email.message_id, /^<.+>$/);
      assert.deepEqual(
        email.attachments.map(({ filename, content_type, content_disposition, content_id, size }) => ({ filename, content_type, content_disposition, content_id, size })),
        [
          { filename: 'logo.png', content_type: 'image/png', content_disposition: 'inline', content_id: 'logo@sender.test', size: PNG.length },
          { filename: 'invoice.pdf', content_type: 'application/pdf', content_disposition: 'attachment', content_id: null, size: pdf.length },
          { filename: 'notes.txt', content_type: 'text/plain', content_disposition: 'attachment', content_id: null, size: notes.length },
        ],
      );
      const cid = await t.resend.emails.receiving.get(id, { html_format: 'cid' } as never);
      assert.match(cid.data!.html!, /src="cid:logo@sender\.test"/);

      // The original: Mailroom's trace line, then the bytes as sent.
      const raw = Buffer.from(await (await followLink(t, (email as any).raw.download_url)).arrayBuffer());
      const trace = raw.indexOf('\r\n', raw.indexOf(';\r\n\t') + 3) + 2;
      assert.match(raw.subarray(0, trace).toString(), /^Received: from \[?[\w.:-]+\]? \(\[127\.0\.0\.1\]\)\r\n\tby .+ \(Mailroom\) with ESMTPS id [0-9a-f-]{36};\r\n\t.+ \+0000\r\n$/);
      assert.ok(raw.subarray(trace).equals(built), 'the message is stored as it was sent');

      const listed = await t.resend.emails.receiving.attachments.list({ emailId: id });
      assert.equal(listed.data!.data.length, 3);
      for (const [i, expected] of [PNG, pdf, notes].entries()) {
        const { data: one } = await t.resend.emails.receiving.attachments.get({ emailId: id, id: listed.data!.data[i]!.id });
        const response = await followLink(t, one!.download_url);
        assert.equal(response.status, 200);
        assert.deepEqual(Buffer.from(await response.arrayBuffer()), expected);
        assert.ok(Date.parse(one!.expires_at) > Date.now());
      }

      const hook = await eventually(() => hooks.received.find((h) => h.payload.data.email_id === id));
      assert.equal(hook.payload.type, 'email.received');
      assert.deepEqual(Object.keys(hook.payload.data).sort(), ['attachments', 'bcc', 'cc', 'created_at', 'email_id', 'from', 'message_id', 'received_for', 'subject', 'to']);
      assert.equal(hook.payload.data.attachments.length, 3);
      assert.equal(hook.payload.data.attachments[1].filename, 'invoice.pdf');

      const list = await t.resend.emails.receiving.list();
      assert.ok(list.data!.data.some((e) => e.id === id && e.attachments.length === 3));
    });

    it('takes several recipients of one transaction as one email, each in received_for', async () => {
      const sent = await sendTo(inbound.port, {
        from: 'a@sender.test',
        to: ['one@inbox.test', 'Two <TWO@Inbox.test>'],
        bcc: 'hidden@inbox.test',
        subject: 'to three',
        text: 'hello',
      });
      const { data } = await t.resend.emails.receiving.get(idOf(sent.response)!);
      assert.deepEqual(data!.received_for, ['one@inbox.test', 'TWO@inbox.test', 'hidden@inbox.test']);
      assert.deepEqual(data!.to, ['one@inbox.test', 'TWO@inbox.test']);
      assert.deepEqual(data!.bcc, [], 'Bcc is in the envelope only');
    });

    it('refuses at RCPT (550) a domain that does not receive, and stores nothing', async () => {
      const before = await rowCount(t, 'received_emails');
      for (const to of ['someone@sendonly.test', 'someone@unknown.test']) {
        await assert.rejects(sendTo(inbound.port, { from: 'a@sender.test', to, subject: 'relay?', text: 'x' }), (error: any) => {
          assert.equal(error.responseCode, 550);
          assert.match(error.response, /^550 5\.7\.1 Relaying denied/);
          return true;
        });
      }
      // One recipient refused, one taken: the message goes to the one taken only.
      const mixed = await sendTo(inbound.port, { from: 'a@sender.test', to: ['ok@inbox.test', 'no@unknown.test'], subject: 'mixed', text: 'x' });
      const { data } = await t.resend.emails.receiving.get(idOf(mixed.response)!);
      assert.deepEqual(data!.received_for, ['ok@inbox.test']);
      assert.equal(await rowCount(t, 'received_emails'), before + 1);
    });

    it('refuses a message over INBOUND_MAX_MESSAGE_BYTES with 552, and stores nothing', async () => {
      const before = await rowCount(t, 'received_emails');
      await assert.rejects(
        sendTo(inbound.port, { from: 'a@sender.test', to: 'big@inbox.test', subject: 'big', text: 'x', attachments: [{ filename: 'big.bin', content: randomBytes(MAX_BYTES) }] }),
        (error: any) => error.responseCode === 552 && /5\.3\.4/.test(error.response),
      );
      assert.equal(await rowCount(t, 'received_emails'), before);
    });

    it('refuses for good a message that can never be read (554 5.6.0) or whose header is too large (552 5.3.4), and stores nothing', async () => {
      const before = await rowCount(t, 'received_emails');
      // Large enough to be read on the reader thread: its refusal comes back as the same reply.
      const parts = Array.from({ length: 1100 }, (_, i) => `--b\r\nContent-Type: text/plain\r\n\r\n${i}${'.'.repeat(60)}\r\n`).join('');
      const bomb = `From: a@sender.test\r\nTo: bomb@inbox.test\r\nContent-Type: multipart/mixed; boundary=b\r\n\r\n${parts}--b--\r\n`;
      const send = (raw: string) => sendTo(inbound.port, { envelope: { from: 'a@sender.test', to: 'bomb@inbox.test' }, raw });
      assert.ok(bomb.length > INLINE_BYTES);
      await assert.rejects(send(bomb), (error: any) => error.responseCode === 554 && /^554 5\.6\.0 The message cannot be read: Max allowed child nodes exceeded/.test(error.response));
      const folded = `From: a@sender.test\r\nSubject: x${'\r\n '.repeat(5001)}\r\n\r\nbody\r\n`;
      await assert.rejects(send(folded), (error: any) => error.responseCode === 552 && /^552 5\.3\.4 Message header too large: at most 5000 lines/.test(error.response));
      assert.equal(await rowCount(t, 'received_emails'), before);
    });

    it('limits recipients per message (452) and connections per client address (421)', async () => {
      const sent = await sendTo(inbound.port, { from: 'a@sender.test', to: ['r1@inbox.test', 'r2@inbox.test', 'r3@inbox.test', 'r4@inbox.test'], subject: 'many', text: 'x' });
      assert.deepEqual(sent.rejected, ['r4@inbox.test']);

      const open = await Promise.all(Array.from({ length: 3 }, () => greeting(inbound.port)));
      try {
        assert.deepEqual(open.map((c) => c.line.slice(0, 4)), ['220 ', '220 ', '220 ']);
        const fourth = await greeting(inbound.port);
        fourth.socket.destroy();
        assert.match(fourth.line, /^421 4\.7\.0 Too many connections from 127\.0\.0\.1/);
      } finally {
        for (const c of open) c.socket.destroy();
      }
      // Once they close, the address may connect again.
      await eventually(async () => {
        const again = await greeting(inbound.port);
        again.socket.destroy();
        return again.line.startsWith('220 ');
      });
    });

    it('refuses a download link that was altered or has expired', async () => {
      const sent = await sendTo(inbound.port, { from: 'a@sender.test', to: 'x@inbox.test', subject: 'link', text: 'x', attachments: [{ filename: 'a.txt', content: 'abc' }] });
      const { data } = await t.resend.emails.receiving.attachments.list({ emailId: idOf(sent.response)! });
      const url = data!.data[0]!.download_url;
      assert.equal((await followLink(t, url)).status, 200);
      const altered = [
        url.replace(/signature=./, (m) => `${m.slice(0, -1)}${m.endsWith('A') ? 'B' : 'A'}`),
        url.replace(/expires=\d+/, (m) => `${m}0`),
        url.replace('received-attachment', 'received-message'),
      ];
      for (const link of altered) assert.equal((await followLink(t, link)).status, 404, link);
      t.clock.advance(2 * 3600_000);
      const expired = await followLink(t, url);
      assert.equal(expired.status, 404);
      assert.match(((await expired.json()) as { message: string }).message, /expired/);
    });
  });
}
