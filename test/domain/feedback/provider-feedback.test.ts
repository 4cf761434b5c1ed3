import assert from 'node:assert/strict';
import { randomBytes, randomUUID } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import {
  basicAuth,
  mailgunHook,
  MAILGUN_KEY,
  POSTMARK_AUTH,
  sendgridKeys,
  sesMail,
  sesNotification,
  snsMessage,
  startSnsHost,
  subscriptionConfirmation,
  TOPIC_ARN,
  type SnsHost,
} from '../../support/providers.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

// The notifications of the providers a relay-mode user sends through (POST /feedback/<provider>):
// emails go through the app to a real SMTP server standing for the provider's relay, which answers
// 250 with a message id as the provider does; each notification is signed as its provider signs it
// and names the message as the provider would. Recorded as a DSN or an ARF report is, once.

const base = { from: 'Acme <news@example.com>', subject: 'Hello', text: 'Hi' };

/** How each provider's relay answers DATA, naming the message it took. */
const ANSWERS = {
  ses: (id: string) => `Ok ${id}`,
  queued: (id: string) => `Ok: queued as ${id}`,
  mailgun: () => 'Great success',
};

for (const dialect of dialects) {
  describe(`provider feedback (${dialect})`, () => {
    let relay: TestSmtpServer;
    let receiver: WebhookReceiver;
    let sns: SnsHost;
    let t: TestApp;
    const sendgrid = sendgridKeys();
    /** The id the relay gave each recipient's message, by recipient. */
    const relayIds = new Map<string, string>();
    let answer: (id: string) => string = ANSWERS.ses;
    let nextId: () => string = () => `0100018c${randomBytes(4).toString('hex')}-${randomUUID()}-000000`;

    const lastEvent = (id: string, expected: string) => eventually(async () => (await t.resend.emails.get(id)).data?.last_event === expected || undefined);
    const statuses = async (id: string) =>
      Object.fromEntries((await t.ctx.db.selectFrom('email_recipients').select(['address', 'status']).where('email_id', '=', id).execute()).map((r) => [r.address, r.status]));
    const eventCount = async (id: string, type: string) =>
      (await t.ctx.db.selectFrom('email_events').select('id').where('email_id', '=', id).where('type', '=', type).execute()).length;
    const suppression = async (email: string) => (await t.resend.suppressions.get(email)).data;

    /** Sends an email through the relay and waits until it is delivered. */
    async function delivered(to: string[]): Promise<string> {
      const { data, error } = await t.resend.emails.send({ ...base, to });
      assert.equal(error, null);
      await lastEvent(data.id, 'delivered');
      return data.id;
    }

    async function post(provider: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
      const response = await fetch(`${t.url}/feedback/${provider}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      });
      return { status: response.status, body: await response.json() };
    }
    /** As SNS posts: its JSON as text/plain. */
    const postSns = (message: unknown) => post('ses', JSON.stringify(message), { 'content-type': 'text/plain; charset=UTF-8', 'x-amz-sns-message-type': 'Notification' });

    before(async () => {
      relay = await startSmtpServer();
      relay.answer = (message) => {
        const id = nextId();
        for (const address of message.to) relayIds.set(address, id);
        return answer(id);
      };
      receiver = await startWebhookReceiver();
      sns = await startSnsHost();
      t = await startApp(dialect, {
        env: {
          SMTP_URL: relay.url,
          MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
          FEEDBACK_SES_TOPICS: TOPIC_ARN,
          FEEDBACK_SNS_HOST: sns.host,
          FEEDBACK_SNS_CA: sns.caFile,
          FEEDBACK_POSTMARK_AUTH: POSTMARK_AUTH,
          FEEDBACK_MAILGUN_KEY: MAILGUN_KEY,
          FEEDBACK_SENDGRID_KEY: sendgrid.verificationKey,
        },
      });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.bounced', 'email.complained', 'email.delivery_delayed', 'email.delivered', 'suppression.added'] });
    });
    after(async () => {
      await t.close();
      await sns.close();
      await receiver.close();
      await relay.close();
    });
    afterEach(() => {
      answer = ANSWERS.ses;
      nextId = () => `0100018c${randomBytes(4).toString('hex')}-${randomUUID()}-000000`;
    });

    describe('Amazon SES through SNS', () => {
      it('confirms a signed subscription by fetching its SubscribeURL, and refuses a tampered one', async () => {
        const confirmation = subscriptionConfirmation(sns);
        const tampered = { ...confirmation, Token: `${confirmation.Token}0` };
        const refused = await postSns(tampered);
        assert.deepEqual([refused.status, refused.body.name], [403, 'invalid_signature']);
        assert.ok(!sns.fetched.some((path) => path.includes(tampered.Token)), 'a tampered confirmation is never followed');

        const elsewhere = snsMessage(sns, { ...subscriptionConfirmation(sns), SubscribeURL: `https://${sns.impostor.host}/?Action=ConfirmSubscription&TopicArn=${TOPIC_ARN}` });
        assert.equal((await postSns(elsewhere)).status, 422);
        assert.deepEqual(sns.impostor.fetched, [], 'a SubscribeURL off SNS is never followed');

        const answered = await postSns(confirmation);
        assert.equal(answered.status, 200, JSON.stringify(answered.body));
        assert.ok(sns.fetched.some((path) => path === new URL(confirmation.SubscribeURL!).pathname + new URL(confirmation.SubscribeURL!).search));
      });

      it('records a permanent bounce (SignatureVersion 1): bounced with its subtype, suppressed, the webhook sent; a replay records nothing', async () => {
        const id = await delivered(['gone@example.com', 'stays@example.com']);
        const providerId = relayIds.get('gone@example.com')!;
        const message = sesNotification(sns, {
          notificationType: 'Bounce',
          bounce: {
            bounceType: 'Permanent',
            bounceSubType: 'General',
            bouncedRecipients: [{ emailAddress: 'gone@example.com', action: 'failed', status: '5.1.1', diagnosticCode: 'smtp; 550 5.1.1 user unknown' }],
            timestamp: new Date().toISOString(),
            feedbackId: randomUUID(),
            reportingMTA: 'dsn; a8-70.smtp-out.amazonses.com',
          },
          mail: sesMail(providerId, '<not-ours@amazonses.com>', ['gone@example.com']),
        });
        const first = await postSns(message);
        assert.deepEqual(first, { status: 200, body: { object: 'feedback', recorded: 1, duplicates: 0, ignored: 0 } });
        await lastEvent(id, 'bounced');
        assert.deepEqual(await statuses(id), { 'gone@example.com': 'bounced', 'stays@example.com': 'delivered' });
        assert.deepEqual([(await suppression('gone@example.com'))?.origin, (await suppression('gone@example.com'))?.source_id], ['bounce', id]);
        const hook = await eventually(() => receiver.received.find((h) => h.payload.type === 'email.bounced' && h.payload.data.email_id === id));
        assert.deepEqual(hook.payload.data.bounce, {
          diagnosticCode: ['5.1.1 smtp; 550 5.1.1 user unknown'],
          message: '5.1.1 smtp; 550 5.1.1 user unknown',
          type: 'Permanent',
          subType: 'NoEmail',
        });

        const again = await postSns(message);
        assert.deepEqual(again, { status: 200, body: { object: 'feedback', recorded: 0, duplicates: 1, ignored: 0 } });
        assert.equal(await eventCount(id, 'bounced'), 1, 'a notification delivered twice records once');
      });

      it('records a complaint of an event-publishing notification (SignatureVersion 2) matched by Message-ID: complained, suppressed, the contact unsubscribed', async () => {
        await t.resend.contacts.create({ email: 'angry@example.com' });
        const id = await delivered(['angry@example.com']);
        const message = sesNotification(
          sns,
          {
            eventType: 'Complaint',
            complaint: { complainedRecipients: [{ emailAddress: 'angry@example.com' }], complaintFeedbackType: 'abuse', timestamp: new Date().toISOString(), feedbackId: randomUUID() },
            // An id the relay never gave: the Message-ID matches.
            mail: sesMail('0100018c-unknown-000000', `<${id}@example.com>`, ['angry@example.com']),
          },
          '2',
        );
        assert.equal((await postSns(message)).body.recorded, 1);
        await lastEvent(id, 'complained');
        assert.equal((await suppression('angry@example.com'))?.origin, 'complaint');
        assert.equal((await t.resend.contacts.get('angry@example.com')).data!.unsubscribed, true);
        await eventually(() => receiver.received.find((h) => h.payload.type === 'email.complained' && h.payload.data.email_id === id));
      });

      it('records a transient bounce as delivery_delayed, unsuppressed; a delivery of a delivered recipient adds nothing', async () => {
        const id = await delivered(['full@example.com']);
        const mail = sesMail(relayIds.get('full@example.com')!, `<${id}@example.com>`, ['full@example.com']);
        const transient = sesNotification(sns, {
          notificationType: 'Bounce',
          bounce: { bounceType: 'Transient', bounceSubType: 'MailboxFull', bouncedRecipients: [{ emailAddress: 'full@example.com' }], timestamp: new Date().toISOString(), feedbackId: randomUUID() },
          mail,
        });
        const delivery = sesNotification(sns, { notificationType: 'Delivery', delivery: { recipients: ['full@example.com'], smtpResponse: '250 2.0.0 OK', timestamp: new Date().toISOString() }, mail });
        assert.equal((await postSns(delivery)).body.recorded, 1);
        assert.equal(await eventCount(id, 'delivered'), 1, 'the relay had recorded the delivery already');
        assert.equal((await postSns(transient)).body.recorded, 1);
        await lastEvent(id, 'delivery_delayed');
        const hook = await eventually(() => receiver.received.find((h) => h.payload.type === 'email.delivery_delayed' && h.payload.data.email_id === id));
        assert.ok(hook);
        assert.equal((await t.resend.suppressions.get('full@example.com')).error?.statusCode, 404);
        // Delivered after all: now it is news.
        const later = sesNotification(sns, { notificationType: 'Delivery', delivery: { recipients: ['full@example.com'], smtpResponse: '250 2.0.0 OK' }, mail });
        assert.equal((await postSns(later)).body.recorded, 1);
        await lastEvent(id, 'delivered');
        assert.equal(await eventCount(id, 'delivered'), 2);
      });

      it('refuses unsigned, tampered, off-host, off-topic and malformed messages, and ignores one about no email of ours', async () => {
        const id = await delivered(['target@example.com']);
        const ses = {
          notificationType: 'Bounce',
          bounce: { bounceType: 'Permanent', bounceSubType: 'General', bouncedRecipients: [{ emailAddress: 'target@example.com', status: '5.1.1' }] },
          mail: sesMail(relayIds.get('target@example.com')!, `<${id}@example.com>`, ['target@example.com']),
        };
        const good = sesNotification(sns, ses);
        const { Signature: _signature, ...unsigned } = good;
        const unsignedAnswer = await postSns(unsigned);
        assert.deepEqual(unsignedAnswer.body, { statusCode: 401, name: 'missing_signature', message: unsignedAnswer.body.message });
        const tampered = { ...good, Message: good.Message!.replace('target@example.com', 'other@example.com') };
        assert.deepEqual([(await postSns(tampered)).status, (await postSns(tampered)).body.name], [403, 'invalid_signature']);
        // Signed with a certificate of its own, served over HTTPS by a host that is not SNS's.
        const impostor = snsMessage(sns.impostor, { Type: 'Notification', Message: JSON.stringify(ses) });
        assert.deepEqual([(await postSns(impostor)).status, (await postSns(impostor)).body.name], [403, 'invalid_signature']);
        assert.deepEqual(sns.impostor.fetched, [], 'nothing is fetched from a host that is not SNS');
        const plainHttp = { ...good, SigningCertURL: good.SigningCertURL!.replace('https:', 'http:') };
        assert.equal((await postSns(plainHttp)).status, 403);
        const offTopic = snsMessage(sns, { Type: 'Notification', Message: JSON.stringify(ses), TopicArn: 'arn:aws:sns:us-east-1:123456789012:someone-else' });
        assert.equal((await postSns(offTopic)).status, 403);
        for (const body of ['{not json', '[]', JSON.stringify({ Type: 'Other' })]) {
          const refusal = await postSns(body);
          assert.deepEqual([refusal.status, refusal.body.name], [422, 'validation_error'], body);
        }
        assert.equal(await eventCount(id, 'bounced'), 0, 'nothing refused was acted on');

        const strangers = sesNotification(sns, { ...ses, mail: sesMail('0100018c-none-000000', '<x@example.com>', ['target@example.com']) });
        assert.deepEqual((await postSns(strangers)).body, { object: 'feedback', recorded: 0, duplicates: 0, ignored: 1 });
        const otherRecipient = sesNotification(sns, { ...ses, bounce: { ...ses.bounce, bouncedRecipients: [{ emailAddress: 'nobody@example.com', status: '5.1.1' }] } });
        assert.equal((await postSns(otherRecipient)).body.ignored, 1, 'a recipient the email does not have is none of ours');
        assert.equal((await statuses(id))['target@example.com'], 'delivered');
      });
    });

    describe('Postmark', () => {
      const auth = { authorization: basicAuth(POSTMARK_AUTH) };

      it('records a HardBounce (suppressed) and a SpamComplaint, matched by the MessageID its relay gave; a replay records once', async () => {
        answer = ANSWERS.queued;
        nextId = () => randomUUID();
        const id = await delivered(['hard@example.com', 'spam@example.com']);
        const bounce = {
          RecordType: 'Bounce',
          MessageStream: 'outbound',
          ID: 4323372036854775,
          Type: 'HardBounce',
          TypeCode: 1,
          Name: 'Hard bounce',
          MessageID: relayIds.get('hard@example.com'),
          Description: 'The server was unable to deliver your message (ex: unknown user, mailbox not found).',
          Details: 'smtp;550 5.1.1 The email account that you tried to reach does not exist.',
          Email: 'hard@example.com',
          From: 'news@example.com',
          BouncedAt: new Date().toISOString(),
          Inactive: true,
          CanActivate: true,
          Subject: 'Hello',
        };
        assert.deepEqual((await post('postmark', bounce, auth)).body, { object: 'feedback', recorded: 1, duplicates: 0, ignored: 0 });
        assert.equal((await post('postmark', bounce, auth)).body.duplicates, 1);
        const complaint = { RecordType: 'SpamComplaint', ID: 42, Type: 'SpamComplaint', TypeCode: 100001, MessageID: relayIds.get('spam@example.com'), Email: 'spam@example.com', Details: 'Test spam complaint details', BouncedAt: new Date().toISOString() };
        assert.equal((await post('postmark', complaint, auth)).body.recorded, 1);
        await lastEvent(id, 'complained');
        assert.deepEqual(await statuses(id), { 'hard@example.com': 'bounced', 'spam@example.com': 'complained' });
        assert.equal(await eventCount(id, 'bounced'), 1);
        assert.equal((await suppression('hard@example.com'))?.origin, 'bounce');
        assert.equal((await suppression('spam@example.com'))?.origin, 'complaint');
        const hook = await eventually(() => receiver.received.find((h) => h.payload.type === 'email.bounced' && h.payload.data.email_id === id));
        assert.deepEqual([hook.payload.data.bounce.type, hook.payload.data.bounce.subType], ['Permanent', 'NoEmail']);
      });

      it('refuses a post without credentials (401) or with wrong ones (403)', async () => {
        const body = { RecordType: 'Bounce', ID: 1, Type: 'HardBounce', MessageID: randomUUID(), Email: 'x@example.com' };
        const missing = await post('postmark', body);
        assert.deepEqual([missing.status, missing.body.name], [401, 'missing_signature']);
        const wrong = await post('postmark', body, { authorization: basicAuth('postmark:wrong-password') });
        assert.deepEqual([wrong.status, wrong.body.name], [403, 'invalid_signature']);
        const malformed = await post('postmark', '{"RecordType":', auth);
        assert.equal(malformed.status, 422);
      });
    });

    describe('Mailgun', () => {
      const failed = (id: string, recipient: string, severity: string, code: number, message: string) => ({
        id: randomBytes(16).toString('base64url'),
        timestamp: Date.now() / 1000,
        event: 'failed',
        severity,
        reason: 'bounce',
        recipient,
        message: { headers: { to: recipient, 'message-id': `${id}@example.com`, from: 'news@example.com', subject: 'Hello' } },
        'delivery-status': { 'attempt-no': 1, code, message, description: '' },
      });

      it('records a permanent failure (bounced, suppressed) and a temporary one (delayed), matched by Message-ID; a replay records once', async () => {
        answer = ANSWERS.mailgun;
        const id = await delivered(['perm@example.com', 'temp@example.com']);
        const now = Math.floor(t.clock.now() / 1000);
        const permanent = mailgunHook(failed(id, 'perm@example.com', 'permanent', 550, '5.1.1 The email account that you tried to reach does not exist.'), now);
        assert.deepEqual((await post('mailgun', permanent)).body, { object: 'feedback', recorded: 1, duplicates: 0, ignored: 0 });
        assert.equal((await post('mailgun', permanent)).body.duplicates, 1);
        assert.equal((await post('mailgun', mailgunHook(failed(id, 'temp@example.com', 'temporary', 452, '4.2.2 Mailbox full'), now))).body.recorded, 1);
        // A delay after the relay's 250 is recorded, and leaves the recipient delivered (docs/bounces.md).
        assert.deepEqual(await statuses(id), { 'perm@example.com': 'bounced', 'temp@example.com': 'delivered' });
        assert.equal(await eventCount(id, 'delivery_delayed'), 1);
        assert.equal(await eventCount(id, 'bounced'), 1);
        assert.equal((await suppression('perm@example.com'))?.origin, 'bounce');
        assert.equal((await t.resend.suppressions.get('temp@example.com')).error?.statusCode, 404);
      });

      it('refuses a tampered, unsigned or stale signature', async () => {
        const id = await delivered(['guarded@example.com']);
        const now = Math.floor(t.clock.now() / 1000);
        const hook = mailgunHook(failed(id, 'guarded@example.com', 'permanent', 550, '5.1.1 no such user'), now) as { signature: Record<string, string>; 'event-data': object };
        const tampered = { ...hook, signature: { ...hook.signature, token: `${hook.signature.token}x` } };
        assert.deepEqual([(await post('mailgun', tampered)).status, (await post('mailgun', tampered)).body.name], [403, 'invalid_signature']);
        assert.equal((await post('mailgun', { 'event-data': hook['event-data'] })).status, 401);
        const stale = mailgunHook(failed(id, 'guarded@example.com', 'permanent', 550, '5.1.1 no such user'), now - 3600);
        const refusal = await post('mailgun', stale);
        assert.deepEqual([refusal.status, refusal.body.name], [403, 'invalid_signature']);
        assert.match(refusal.body.message, /stale/);
        const otherKey = mailgunHook(failed(id, 'guarded@example.com', 'permanent', 550, '5.1.1'), now, 'key-ffffffffffffffffffffffffffffffff');
        assert.equal((await post('mailgun', otherKey)).status, 403);
        assert.equal((await statuses(id))['guarded@example.com'], 'delivered');
      });
    });

    describe('SendGrid', () => {
      const signed = (body: string, timestamp = String(Math.floor(Date.now() / 1000))) => ({
        'x-twilio-email-event-webhook-signature': sendgrid.sign(timestamp, body),
        'x-twilio-email-event-webhook-timestamp': timestamp,
      });

      it('records a batch (a bounce, a block, a spam report), matched by sg_message_id; a replayed batch records once; a tampered one nothing', async () => {
        answer = ANSWERS.queued;
        nextId = () => randomBytes(16).toString('base64url');
        const id = await delivered(['bounce@example.com', 'blocked@example.com', 'report@example.com']);
        const event = (email: string, fields: Record<string, unknown>) => ({
          email,
          timestamp: Math.floor(Date.now() / 1000),
          'smtp-id': `<${id}@example.com>`,
          sg_event_id: randomBytes(16).toString('base64'),
          sg_message_id: `${relayIds.get(email)}.filterdrecv-8594d6b7f8-abcde-1-5F1A2B3C-4.0`,
          ...fields,
        });
        const body = JSON.stringify([
          event('bounce@example.com', { event: 'bounce', reason: '550 5.1.1 The email account that you tried to reach does not exist', status: '5.1.1', type: 'bounce' }),
          event('blocked@example.com', { event: 'bounce', reason: '421 4.7.0 Try again later', status: '4.7.0', type: 'blocked' }),
          event('report@example.com', { event: 'spamreport' }),
          event('report@example.com', { event: 'open', useragent: 'Mozilla/5.0' }),
        ]);
        const tampered = body.replace('"type":"bounce"', '"type":"blocked"');
        const refused = await post('sendgrid', tampered, signed(body));
        assert.deepEqual([refused.status, refused.body.name], [403, 'invalid_signature']);
        assert.equal((await post('sendgrid', body)).status, 401);
        assert.equal(await eventCount(id, 'bounced'), 0);

        assert.deepEqual((await post('sendgrid', body, signed(body))).body, { object: 'feedback', recorded: 4, duplicates: 0, ignored: 0 });
        assert.deepEqual((await post('sendgrid', body, signed(body))).body, { object: 'feedback', recorded: 0, duplicates: 4, ignored: 0 });
        await lastEvent(id, 'complained');
        assert.deepEqual(await statuses(id), { 'bounce@example.com': 'bounced', 'blocked@example.com': 'delivered', 'report@example.com': 'complained' });
        assert.equal(await eventCount(id, 'delivery_delayed'), 1, 'the block is recorded as a delay');
        assert.equal(await eventCount(id, 'bounced'), 1);
        assert.equal(await eventCount(id, 'complained'), 1);
        assert.equal((await suppression('bounce@example.com'))?.origin, 'bounce');
        assert.equal((await suppression('report@example.com'))?.origin, 'complaint');
        assert.equal((await t.resend.suppressions.get('blocked@example.com')).error?.statusCode, 404);
      });
    });
  });
}

describe('provider feedback not configured', () => {
  it('answers 404 in Resend\'s shape on each provider route, naming the setting', async () => {
    const t = await startApp('sqlite', { worker: false });
    try {
      for (const [provider, setting] of [['ses', 'FEEDBACK_SES_TOPICS'], ['postmark', 'FEEDBACK_POSTMARK_AUTH'], ['mailgun', 'FEEDBACK_MAILGUN_KEY'], ['sendgrid', 'FEEDBACK_SENDGRID_KEY']]) {
        const response = await fetch(`${t.url}/feedback/${provider}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        const body = (await response.json()) as { statusCode: number; name: string; message: string };
        assert.equal(body.statusCode, 404, provider);
        assert.equal(body.name, 'not_found');
        assert.match(body.message, new RegExp(setting!));
      }
    } finally {
      await t.close();
    }
  });
});
