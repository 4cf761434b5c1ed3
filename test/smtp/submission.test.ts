import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { dialects, eventually, followLink, rowCount, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { dialogue } from '../support/smtp-dialogue.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// SMTP submission end to end: real SMTP clients (nodemailer) sign in with an API key and submit, the
// official SDK reads the emails back, Mailroom relays them to a real SMTP server, and a real HTTP
// receiver takes the webhooks.

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

/** A message built once, so that what arrives can be compared with what was submitted. */
function build(options: Mail.Options): Promise<Buffer> {
  return new Promise((resolve, reject) => new MailComposer(options).compile().build((error, raw) => (error ? reject(error) : resolve(raw))));
}

/** A message's header block and the rest (from the empty line on). */
function split(raw: Buffer): { headers: string; body: Buffer } {
  const end = raw.indexOf('\r\n\r\n');
  return { headers: raw.subarray(0, end + 2).toString('latin1'), body: raw.subarray(end + 2) };
}

/** What a refused send's error says: its reply code and the reply. */
async function refusal(send: Promise<unknown>): Promise<{ code: number; response: string }> {
  try {
    await send;
  } catch (error) {
    const { responseCode, response } = error as { responseCode: number; response: string };
    return { code: responseCode, response };
  }
  throw new Error('the server accepted what it should have refused');
}

for (const dialect of dialects) {
  describe(`SMTP submission (${dialect})`, () => {
    let t: TestApp;
    let relay: TestSmtpServer;
    let starttls: Awaited<ReturnType<typeof startSubmission>>;
    let implicit: Awaited<ReturnType<typeof startSubmission>>;
    let hooks: WebhookReceiver;

    before(async () => {
      relay = await startSmtpServer();
      hooks = await startWebhookReceiver();
      t = await startApp(dialect, {
        env: { SMTP_URL: relay.url, SUBMISSION_MAX_AUTH_FAILURES: '3', MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
      });
      starttls = await startSubmission(t);
      implicit = await startSubmission(t, true);
      await t.resend.domains.create({ name: 'example.com' });
      await t.resend.webhooks.create({ endpoint: hooks.url, events: ['email.sent', 'email.delivered'] });
    });
    after(async () => {
      await starttls.close();
      await implicit.close();
      await t.close();
      await relay.close();
      await hooks.close();
    });

    it('relays html, text, an inline image and attachments as submitted over STARTTLS, DKIM-signed; Bcc stays in the envelope; the SDK reads the email by the id of the 250 reply', async () => {
      const pdf = randomBytes(60_000);
      const built = await build({
        from: 'Ada <ada@example.com>',
        to: 'Bob <bob@example.org>',
        cc: 'carol@example.net',
        subject: 'Invoice 42 – ünïcode',
        text: 'See the invoice.',
        html: '<p>See the invoice.</p><img src="cid:logo@example.com">',
        headers: { 'X-Entity-Ref-ID': 'ref-42' },
        attachments: [
          { filename: 'logo.png', content: PNG, cid: 'logo@example.com', contentType: 'image/png' },
          { filename: 'invoice.pdf', content: pdf, contentType: 'application/pdf' },
        ],
      });
      const client = submissionClient(starttls.port, t.token, { requireTLS: true });
      const envelope = { from: 'ada@example.com', to: ['bob@example.org', 'carol@example.net', 'dan@example.net'] };
      const info = await client.sendMail({ envelope, raw: built });
      client.close();
      const id = idOf(info.response);
      assert.ok(id, info.response);

      const { data: email } = await t.resend.emails.get(id);
      assert.equal(email!.from, 'Ada <ada@example.com>');
      assert.deepEqual(email!.to, ['Bob <bob@example.org>']);
      assert.deepEqual(email!.cc, ['carol@example.net']);
      assert.deepEqual(email!.bcc, ['dan@example.net']);
      assert.equal(email!.subject, 'Invoice 42 – ünïcode');
      assert.equal(email!.html, '<p>See the invoice.</p><img src="cid:logo@example.com">');
      assert.equal(email!.text, 'See the invoice.');

      // One SMTP transaction for all (RELAY_ENVELOPE_SENDER=sender): the Bcc recipient is only in its envelope.
      await eventually(() => relay.messages.some((m) => m.parsed.subject === 'Invoice 42 – ünïcode'));
      const copies = relay.messages.filter((m) => m.parsed.subject === 'Invoice 42 – ünïcode');
      assert.deepEqual(copies.map((m) => [m.from, [...m.to].sort()]), [['ada@example.com', [...envelope.to].sort()]]);
      for (const copy of copies) {
        const got = split(copy.raw);
        assert.deepEqual(got.body, split(built).body, 'the body arrives byte for byte');
        assert.match(got.headers, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=example\.com;/);
        assert.ok(got.headers.endsWith(split(built).headers), 'the headers arrive as submitted, after the signature');
        assert.doesNotMatch(got.headers, /^bcc:/im);
        assert.deepEqual(copy.parsed.attachments.find((a) => a.filename === 'invoice.pdf')!.content, pdf);
      }

      // The raw message is the one relayed: as submitted, after its DKIM signature (nodemailer gave it a
      // Message-ID and a Date, so nothing else was added).
      await eventually(async () => (await t.resend.emails.get(id)).data?.last_event === 'delivered');
      const raw = await t.fetch(`/emails/${id}/raw`, { headers: { accept: 'message/rfc822' } });
      assert.deepEqual(Buffer.from(await raw.arrayBuffer()), copies[0]!.raw);
      const { data: files } = (await (await t.fetch(`/emails/${id}/attachments`)).json()) as { data: { filename: string; download_url: string }[] };
      assert.deepEqual(files.map((f) => f.filename), ['logo.png', 'invoice.pdf']);
      assert.deepEqual(Buffer.from(await (await followLink(t, files[1]!.download_url)).arrayBuffer()), pdf);

      // Events and webhooks as for an email sent over HTTP.
      await eventually(() => hooks.received.some((h) => h.payload.type === 'email.delivered' && h.payload.data.email_id === id));
      const { data: list } = await t.resend.emails.list();
      assert.ok(list!.data.some((e) => e.id === id));
    });

    it('over implicit TLS and AUTH LOGIN, gives a message without them a Message-ID and a Date, shown by GET /emails/:id/raw; html only has no text', async () => {
      const built = await build({ from: 'ada@example.com', to: 'bob@example.org', subject: 'bare', html: '<p>no ids</p>' });
      const bare = Buffer.from(built.toString('latin1').replace(/^(Message-ID|Date): .*\r\n/gim, ''), 'latin1');
      const client = submissionClient(implicit.port, t.token, { secure: true, authMethod: 'LOGIN' });
      const info = await client.sendMail({ envelope: { from: 'ada@example.com', to: ['bob@example.org'] }, raw: bare });
      client.close();
      const id = idOf(info.response)!;
      const { data: email } = await t.resend.emails.get(id);
      assert.equal(email!.message_id, `<${id}@example.com>`);
      // No text part was sent, so there is none to show (as for an email sent with html only).
      assert.match(email!.html!, /^<p>no ids<\/p>\s*$/);
      assert.equal(email!.text, null);
      // Once sent, the raw message is the one sent: the signature, the two headers added, the rest as submitted.
      await eventually(async () => (await t.resend.emails.get(id)).data?.last_event === 'delivered');
      const raw = await (await t.fetch(`/emails/${id}/raw`, { headers: { accept: 'message/rfc822' } })).text();
      assert.match(raw, new RegExp(`^DKIM-Signature: [^]*?\\r\\nMessage-ID: <${id}@example\\.com>\\r\\nDate: \\w{3}, \\d{2} \\w{3} \\d{4} \\d{2}:\\d{2}:\\d{2} \\+0000\\r\\n`));
      assert.ok(raw.endsWith(bare.toString('latin1')));
    });

    it('takes tags, a topic, a schedule and an Idempotency-Key from headers, and removes them from the message', async () => {
      const { data: topic } = await t.resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' });
      const client = submissionClient(starttls.port, t.token);
      const message = {
        from: 'ada@example.com',
        to: 'bob@example.org',
        subject: 'later',
        text: 'scheduled',
        headers: {
          'X-Mailroom-Tags': 'category=welcome, plan=pro',
          'X-Mailroom-Topic-Id': topic!.id,
          'X-Mailroom-Scheduled-At': 'in 1 hour',
          'Resend-Idempotency-Key': 'welcome/42',
        },
      };
      const first = await client.sendMail(message);
      // A retry by the client: a new Message-ID, Date and boundaries, the same message.
      const again = await client.sendMail(message);
      client.close();
      const id = idOf(first.response)!;
      assert.equal(idOf(again.response), id);
      const { data: email } = await t.resend.emails.get(id);
      assert.deepEqual(email!.tags, [{ name: 'category', value: 'welcome' }, { name: 'plan', value: 'pro' }]);
      assert.equal(email!.topic_id, topic!.id);
      assert.equal(email!.last_event, 'scheduled');
      const raw = await (await t.fetch(`/emails/${id}/raw`, { headers: { accept: 'message/rfc822' } })).text();
      assert.doesNotMatch(raw, /^(X-Mailroom-|Resend-Idempotency-Key)/im);
      const { error } = await t.resend.emails.cancel(id);
      assert.equal(error, null);
      assert.equal((await t.resend.emails.get(id)).data!.last_event, 'canceled');
    });

    it('skips a suppressed recipient and delivers to the others', async () => {
      await t.fetch('/suppressions', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'gone@example.org' }) });
      const client = submissionClient(starttls.port, t.token);
      const info = await client.sendMail({ from: 'ada@example.com', to: ['gone@example.org', 'here@example.org'], subject: 'suppression', text: 'x' });
      client.close();
      const id = idOf(info.response)!;
      const events = async () => (await (await t.fetch(`/emails/${id}/events`)).json()) as { data: { type: string; recipient: string }[] };
      await eventually(async () => (await events()).data.some((e) => e.type === 'suppressed' && e.recipient === 'gone@example.org'));
      await eventually(() => relay.messages.some((m) => m.parsed.subject === 'suppression'));
      assert.deepEqual(relay.messages.filter((m) => m.parsed.subject === 'suppression').map((m) => m.to), [['here@example.org']]);
    });

    it('refuses, with a reply naming the rule: a sending key bound to another domain, 51 recipients, a bad tag, no From', async () => {
      const { data: other } = await t.resend.domains.create({ name: 'other.example' });
      const { data: bound } = await t.resend.apiKeys.create({ name: 'bound', permission: 'sending_access', domain_id: other!.id });
      const before = await rowCount(t, 'emails');
      const send = (password: string, message: Mail.Options) => {
        const client = submissionClient(starttls.port, password);
        return client.sendMail(message).finally(() => client.close());
      };
      const wrongDomain = await refusal(send(bound!.token, { from: 'ada@example.com', to: 'bob@example.org', subject: 's', text: 'x' }));
      assert.equal(wrongDomain.code, 550);
      assert.match(wrongDomain.response, /5\.7\.1 The From header: This API key can only send from the other\.example domain/);
      // The same key from its own domain is fine.
      assert.ok(idOf((await send(bound!.token, { from: 'ada@other.example', to: 'bob@example.org', subject: 's', text: 'x' })).response));

      const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.org`);
      const tooMany = await refusal(send(t.token, { from: 'ada@example.com', to: many, subject: 's', text: 'x' }));
      assert.equal(tooMany.code, 554);
      assert.match(tooMany.response, /Too many recipients: at most 50 per email, got 51/);
      const badTag = await refusal(send(t.token, { from: 'ada@example.com', to: 'bob@example.org', subject: 's', text: 'x', headers: { 'X-Mailroom-Tags': 'sp ace=1' } }));
      assert.equal(badTag.code, 554);
      assert.match(badTag.response, /X-Mailroom-Tags/);
      const noFrom = await refusal(send(t.token, { envelope: { from: 'ada@example.com', to: ['bob@example.org'] }, raw: 'Subject: s\r\n\r\nx\r\n' }));
      assert.equal(noFrom.code, 554);
      assert.match(noFrom.response, /no From header/);
      assert.equal(await rowCount(t, 'emails'), before + 1);
    });

    it('refuses a message that could show a domain its key may not send from: two From headers, a From of two mailboxes without a Sender, a Sender of another domain; each reply names the header', async () => {
      const { data: own } = await t.resend.domains.create({ name: 'own.example' });
      const { data: bound } = await t.resend.apiKeys.create({ name: 'own', permission: 'sending_access', domain_id: own!.id });
      const before = await rowCount(t, 'emails');
      const submit = (password: string, headers: string) => {
        const client = submissionClient(starttls.port, password);
        const raw = `${headers}To: bob@example.org\r\nSubject: who sent this\r\n\r\nhello\r\n`;
        return client.sendMail({ envelope: { from: 'ada@own.example', to: ['bob@example.org'] }, raw }).finally(() => client.close());
      };
      const refused: [string, string, RegExp][] = [
        ['two From headers, the other domain first', 'From: ceo@example.com\r\nFrom: ada@own.example\r\n', /^550 5\.7\.1 The message has 2 From headers; one is allowed\.$/],
        ['a second From written "From :"', 'From: ada@own.example\r\nFrom : ceo@example.com\r\n', /^550 5\.7\.1 The message has 2 From headers; one is allowed\.$/],
        ['a From of two mailboxes, no Sender', 'From: ada@own.example, ceo@example.com\r\n', /^550 5\.7\.1 The From header names 2 mailboxes; more than one needs a Sender header \(RFC 5322\)\.$/],
        ['a From of two mailboxes, one of another domain', 'From: ada@own.example, ceo@example.com\r\nSender: ada@own.example\r\n', /^550 5\.7\.1 The From header: This API key can only send from the own\.example domain\.$/],
        ['a Sender of another domain', 'From: ada@own.example\r\nSender: ceo@example.com\r\n', /^550 5\.7\.1 The Sender header: This API key can only send from the own\.example domain\.$/],
        ['a Sender of another domain, by name', 'From: ada@own.example\r\nSender: "ada@own.example" <ceo@example.com>\r\n', /^550 5\.7\.1 The Sender header: This API key/],
        ['two Sender headers', 'From: ada@own.example\r\nSender: ada@own.example\r\nSender: ceo@example.com\r\n', /^550 5\.7\.1 The message has 2 Sender headers; at most one is allowed\.$/],
        ['a Sender of two mailboxes', 'From: ada@own.example\r\nSender: ada@own.example, ceo@example.com\r\n', /^550 5\.7\.1 The Sender header must name one mailbox\.$/],
      ];
      for (const [what, headers, reply] of refused) {
        const refusedReply = await refusal(submit(bound!.token, headers));
        assert.equal(refusedReply.code, 550, what);
        assert.match(refusedReply.response, reply, what);
      }
      // A full-access key may send from any domain, but not a message readers could show two ways.
      assert.match((await refusal(submit(t.token, 'From: ceo@example.com\r\nFrom: ada@own.example\r\n'))).response, /2 From headers/);
      assert.equal(await rowCount(t, 'emails'), before, 'nothing refused is stored');

      for (const headers of ['From: ada@own.example, bob@own.example\r\nSender: ada@own.example\r\n', 'From: ada@own.example\r\nSender: ops@own.example\r\n']) {
        const id = idOf((await submit(bound!.token, headers)).response);
        assert.ok(id, headers);
      }
      assert.equal(await rowCount(t, 'emails'), before + 2);
    });

    it('offers AUTH only once TLS is up: before STARTTLS the EHLO reply has STARTTLS and no AUTH, which is not taken; after it, AUTH PLAIN LOGIN', async () => {
      const client = await dialogue(starttls.port);
      try {
        const clear = await client.reply('EHLO client.test');
        assert.ok(clear.includes('250-STARTTLS'), clear.join('\n'));
        assert.deepEqual(clear.filter((line) => /AUTH/.test(line)), [], 'no AUTH offered in clear');
        assert.match((await client.reply('AUTH LOGIN'))[0]!, /^5\d\d /, 'nor taken: no prompt for a username');
        assert.deepEqual(await client.reply('MAIL FROM:<ada@example.com>'), ['530 5.7.0 Must issue a STARTTLS command first, then AUTH']);
        await client.starttls();
        const secure = await client.reply('EHLO client.test');
        assert.ok(secure.includes('250-AUTH PLAIN LOGIN'), secure.join('\n'));
        assert.ok(!secure.some((line) => /STARTTLS/.test(line)));
        const plain = Buffer.from(`\0resend\0${t.token}`).toString('base64');
        assert.match((await client.reply(`AUTH PLAIN ${plain}`))[0]!, /^235 /);
      } finally {
        client.close();
      }
      const implicitTls = await dialogue(implicit.port, { secure: true });
      try {
        assert.ok((await implicitTls.reply('EHLO client.test')).includes('250-AUTH PLAIN LOGIN'), 'implicit TLS offers AUTH at once');
      } finally {
        implicitTls.close();
      }
    });

    it('asks for AUTH (530), takes none in clear (530: STARTTLS first), refuses a wrong password (535), then refuses an address that keeps failing (421)', async () => {
      const noAuth = await refusal(submissionClient(starttls.port, undefined).sendMail({ from: 'ada@example.com', to: 'bob@example.org', subject: 's', text: 'x' }));
      assert.equal(noAuth.code, 530);
      // A client that does not do STARTTLS sees no AUTH offered, so it never sends its key.
      const insecure = await refusal(submissionClient(starttls.port, t.token, { ignoreTLS: true }).sendMail({ from: 'ada@example.com', to: 'b@example.org', text: 'x' }));
      assert.deepEqual(insecure, { code: 530, response: '530 5.7.0 Must issue a STARTTLS command first, then AUTH' });
      const wrongUser = await refusal(submissionClient(starttls.port, t.token, { auth: { user: 'admin', pass: t.token } }).verify());
      assert.equal(wrongUser.code, 535);
      for (let i = 0; i < 2; i++) assert.equal((await refusal(submissionClient(starttls.port, 're_wrong').verify())).code, 535);
      // Three failures: this address is refused for a while, even with the right password.
      const locked = await refusal(submissionClient(starttls.port, t.token).verify());
      assert.equal(locked.code, 421);
      assert.match(locked.response, /Too many failed authentication attempts/);
    });
  });
}

describe('SMTP submission with SUBMISSION_ALLOW_INSECURE_AUTH=true', () => {
  let t: TestApp;
  let starttls: Awaited<ReturnType<typeof startSubmission>>;
  before(async () => {
    t = await startApp('sqlite', { worker: false, env: { SUBMISSION_ALLOW_INSECURE_AUTH: 'true' } });
    starttls = await startSubmission(t);
  });
  after(async () => {
    await starttls.close();
    await t.close();
  });

  it('offers and takes AUTH before STARTTLS, as the operator chose for a loopback client', async () => {
    const client = await dialogue(starttls.port);
    try {
      const clear = await client.reply('EHLO client.test');
      assert.ok(clear.includes('250-AUTH PLAIN LOGIN'), clear.join('\n'));
      const plain = Buffer.from(`\0resend\0${t.token}`).toString('base64');
      assert.match((await client.reply(`AUTH PLAIN ${plain}`))[0]!, /^235 /);
      assert.match((await client.reply('MAIL FROM:<ada@example.com>'))[0]!, /^250 /);
    } finally {
      client.close();
    }
  });
});
