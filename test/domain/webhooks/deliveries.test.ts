import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const EMAIL_EVENTS = ['email.sent', 'email.delivered', 'email.delivery_delayed', 'email.bounced', 'email.complained', 'email.failed', 'email.scheduled', 'email.suppressed'];

const base = { from: 'Acme <news@example.com>', subject: 'Hello', html: '<p>Hi</p>', tags: [{ name: 'category', value: 'welcome' }] };

/** Every verifier an application may use accepts `hook` under `secret`, and what they return is its payload. */
function assertVerified(t: TestApp, hook: ReceivedWebhook, secret: string): void {
  const id = hook.headers['svix-id'] as string;
  const timestamp = hook.headers['svix-timestamp'] as string;
  const signature = hook.headers['svix-signature'] as string;
  assert.deepEqual(t.resend.webhooks.verify({ payload: hook.body, headers: { id, timestamp, signature }, webhookSecret: secret }), hook.payload);
  assert.deepEqual(new StandardWebhook(secret).verify(hook.body, hook.headers as Record<string, string>), hook.payload);
  assert.deepEqual(new SvixWebhook(secret).verify(hook.body, hook.headers as Record<string, string>), hook.payload);
}

for (const dialect of dialects) {
  describe(`webhook deliveries (${dialect})`, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let receiver: WebhookReceiver;
    let webhookId: string;
    let secret: string;
    const forEmail = (id: string) => receiver.received.filter((hook) => hook.payload.data.email_id === id);
    const types = (id: string) => forEmail(id).map((hook) => hook.payload.type);

    before(async () => {
      smtp = await startSmtpServer();
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      const { data } = await t.resend.webhooks.create({ endpoint: receiver.url, events: EMAIL_EVENTS as never });
      webhookId = data!.id;
      secret = data!.signing_secret;
    });
    afterEach(() => {
      smtp.onMessage = () => undefined;
      receiver.answer = () => 200;
    });
    after(async () => {
      await t.close();
      await receiver.close();
      await smtp.close();
    });

    it("posts each email event, signed for the SDK, standardwebhooks and svix, in Resend's shape", async () => {
      const sent = (await t.resend.emails.send({ ...base, to: 'jane@example.com' })).data!.id;
      const bounced = (await t.resend.emails.send({ ...base, to: 'bounced@resend.dev' })).data!.id;
      const complained = (await t.resend.emails.send({ ...base, to: 'complained@resend.dev' })).data!.id;
      const suppressed = (await t.resend.emails.send({ ...base, to: 'suppressed@resend.dev' })).data!.id;
      await eventually(() => types(sent).length === 2 && types(bounced).length === 2 && types(complained).length === 3 && types(suppressed).length === 1);
      // The events of one step are posted at once: they may arrive in any order.
      assert.deepEqual(types(sent).sort(), ['email.delivered', 'email.sent']);
      assert.deepEqual(types(bounced).sort(), ['email.bounced', 'email.sent']);
      assert.deepEqual(types(complained).sort(), ['email.complained', 'email.delivered', 'email.sent']);
      assert.deepEqual(types(suppressed), ['email.suppressed']);

      const delivered = forEmail(sent).find((hook) => hook.payload.type === 'email.delivered')!;
      for (const hook of receiver.received) assertVerified(t, hook, secret);
      assert.equal(delivered.headers['content-type'], 'application/json');
      assert.match(delivered.headers['user-agent']!, /^Mailroom\//);
      assert.equal(delivered.headers['webhook-id'], delivered.headers['svix-id']);
      assert.match(delivered.payload.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(Object.keys(delivered.payload).sort(), ['created_at', 'data', 'type']);
      const email = (await t.resend.emails.get(sent)).data!;
      assert.deepEqual(delivered.payload.data, {
        created_at: email.created_at.replace(' ', 'T').replace(/\+00$/, 'Z'),
        email_id: sent,
        message_id: forEmail(sent)[0]!.payload.data.message_id,
        from: base.from,
        to: ['jane@example.com'],
        subject: base.subject,
        tags: { category: 'welcome' },
      });
      assert.match(delivered.payload.data.message_id, /^<.+@example\.com>$/);

      const bounce = forEmail(bounced).find((hook) => hook.payload.type === 'email.bounced')!.payload.data.bounce;
      assert.deepEqual(Object.keys(bounce).sort(), ['diagnosticCode', 'message', 'subType', 'type']);
      assert.equal(bounce.type, 'Permanent');
      assert.equal(forEmail(suppressed)[0]!.payload.data.suppressed.type, 'OnAccountSuppressionList');
    });

    it('verifies, in every verifier, the post as Mailroom sent it, and refuses it tampered with or ten minutes late', async (test) => {
      const emailId = (await t.resend.emails.send({ ...base, to: 'tampered@example.com' })).data!.id;
      await eventually(() => types(emailId).includes('email.delivered'));
      const hook = forEmail(emailId).find((received) => received.payload.type === 'email.delivered')!;
      const headers = hook.headers as Record<string, string>;
      assertVerified(t, hook, secret);
      const refused = (body: string, sent: Record<string, string>, message: string) => {
        const error = { name: 'WebhookVerificationError', message };
        const [id, timestamp, signature] = [sent['svix-id']!, sent['svix-timestamp']!, sent['svix-signature']!];
        assert.throws(() => t.resend.webhooks.verify({ payload: body, headers: { id, timestamp, signature }, webhookSecret: secret }), error);
        assert.throws(() => new StandardWebhook(secret).verify(body, sent), error);
        assert.throws(() => new SvixWebhook(secret).verify(body, sent), error);
      };
      refused(hook.body.replace('"type":"', '"type":"x'), headers, 'No matching signature found');
      // The id and the timestamp are signed with the body: under another id or time, the signature is not theirs.
      refused(hook.body, { ...headers, 'svix-id': 'msg_other', 'webhook-id': 'msg_other' }, 'No matching signature found');
      const earlier = String(Number(headers['svix-timestamp']) - 1);
      refused(hook.body, { ...headers, 'svix-timestamp': earlier, 'webhook-timestamp': earlier }, 'No matching signature found');
      // The same post, untouched, verified ten minutes later (a replay): outside the verifiers' five-minute tolerance.
      test.mock.timers.enable({ apis: ['Date'], now: Date.now() + 600_000 });
      refused(hook.body, headers, 'Message timestamp too old');
    });

    it('posts email.delivery_delayed when the relay answers 4xx, and email.failed when the topic refuses', async () => {
      let tries = 0;
      smtp.onMessage = () => (tries++ === 0 ? { code: 451, message: '4.3.0 Try again later' } : undefined);
      const id = (await t.resend.emails.send({ ...base, to: 'slow@example.com' })).data!.id;
      await eventually(() => types(id).includes('email.delivery_delayed'));
      t.advance(3_000);
      // sent and delivered are recorded together; their two posts may arrive in either order.
      await eventually(() => types(id).includes('email.delivered') && types(id).includes('email.sent'));
      assert.deepEqual(types(id).sort(), ['email.delivered', 'email.delivery_delayed', 'email.sent']);

      const topic = (await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!.id;
      const later = new Date(t.clock.now() + 3_600_000).toISOString();
      const scheduled = (await t.resend.emails.send({ ...base, to: 'nobody@example.com', topicId: topic, scheduledAt: later })).data!.id;
      // Refused at acceptance: both events are posted at once, in either order.
      await eventually(() => types(scheduled).length === 2);
      assert.deepEqual(types(scheduled).sort(), ['email.failed', 'email.scheduled']);
      assert.match(forEmail(scheduled).find((hook) => hook.payload.type === 'email.failed')!.payload.data.failed.reason, /opt-in only/);
    });

    it('retries a failing endpoint on the schedule under one message id, logs every attempt, and replays', async () => {
      const firstHooks = () => receiver.received.filter((hook) => hook.payload.type === 'email.sent' && hook.payload.data.to[0] === 'retry@example.com');
      // This email's email.sent fails twice, then succeeds.
      receiver.answer = (hook) => (firstHooks().includes(hook) ? ([500, 503][firstHooks().length - 1] ?? 200) : 200);
      const id = (await t.resend.emails.send({ ...base, to: 'retry@example.com' })).data!.id;
      await eventually(() => firstHooks().length === 1);

      // The endpoint's delivery log: find this email's email.sent event.
      const events = await requestJson(t, 'GET', `/webhooks/${webhookId}/events?limit=100`);
      let eventId: string | undefined;
      for (const candidate of events.body.data.filter((e: { type: string }) => e.type === 'email.sent')) {
        const detail = await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${candidate.id}`);
        if (detail.body.payload.data.email_id === id) eventId = candidate.id;
      }
      assert.ok(eventId);
      // The clock moves only once each attempt is recorded, and every other post has settled: a job still
      // running when the clock jumps minutes would look abandoned, and be taken over.
      const settled = async (attempts: number) => {
        const log = await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${eventId}/attempts`);
        const all = await requestJson(t, 'GET', `/webhooks/${webhookId}/events?limit=100`);
        return log.body.data.length === attempts && all.body.data.every((e: { status: string }) => e.status !== 'pending');
      };
      await eventually(() => settled(1));
      t.advance(5_000);
      await eventually(() => firstHooks().length === 2);
      await eventually(() => settled(2));
      t.advance(300_000);
      await eventually(() => firstHooks().length === 3);
      const ids = new Set(firstHooks().map((hook) => hook.headers['svix-id']));
      assert.equal(ids.size, 1);
      await eventually(async () => (await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${eventId}`)).body.status === 'success');
      const attempts = await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${eventId}/attempts`);
      assert.deepEqual(attempts.body.data.map((a: { http_status_code: number }) => a.http_status_code).sort(), [200, 500, 503]);

      const replay = await requestJson(t, 'POST', `/webhooks/${webhookId}/events/${eventId}/replay`);
      assert.deepEqual(replay.body, { object: 'webhook_event', id: eventId });
      await eventually(() => firstHooks().length === 4);
      assert.equal(firstHooks()[3]!.headers['svix-id'], [...ids][0]);
    });

    it('stops verifying with the old secret once rotated, and sends nothing to a disabled endpoint', async () => {
      const rotated = (await t.resend.webhooks.rotateSigningSecret(webhookId)).data!.signing_secret;
      const id = (await t.resend.emails.send({ ...base, to: 'rotated@example.com' })).data!.id;
      await eventually(() => types(id).length === 2);
      for (const hook of forEmail(id)) {
        assertVerified(t, hook, rotated);
        assert.throws(() => new StandardWebhook(secret).verify(hook.body, hook.headers as Record<string, string>), { name: 'WebhookVerificationError', message: 'No matching signature found' });
      }
      secret = rotated;

      await t.resend.webhooks.update(webhookId, { status: 'disabled' });
      const quiet = (await t.resend.emails.send({ ...base, to: 'quiet@example.com' })).data!.id;
      await eventually(async () => (await t.resend.emails.get(quiet)).data?.last_event === 'delivered');
      const other = (await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.delivered'] })).data!.id;
      const marker = (await t.resend.emails.send({ ...base, to: 'marker@example.com' })).data!.id;
      await eventually(() => types(marker).length === 1);
      assert.deepEqual(types(quiet), []);
      await t.resend.webhooks.remove(other);
    });
  });
}
