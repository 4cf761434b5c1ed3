import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { RETRY_AFTER_MS } from '../../../src/domain/webhooks/deliver-webhook.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

for (const dialect of dialects) {
  describe(`an endpoint that keeps failing (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
      receiver.answer = () => 500;
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true', WEBHOOK_DISABLE_AFTER_DAYS: '1' } });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('is tried on the whole schedule, then the message fails, and past the limit the endpoint is disabled, saying why', async () => {
      const webhookId = (await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.delivered'] })).data!.id;
      await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'Hi', text: 'x' });
      await eventually(() => receiver.received.length === 1);
      const eventId = (await requestJson(t, 'GET', `/webhooks/${webhookId}/events`)).body.data[0].id;
      const attempts = async () => (await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${eventId}/attempts`)).body.data.length;
      // Each wait of the schedule, once the attempt before it is recorded (nothing runs when the clock jumps).
      for (const [i, wait] of RETRY_AFTER_MS.entries()) {
        await eventually(async () => (await attempts()) === i + 1);
        t.advance(wait);
      }
      await eventually(async () => (await attempts()) === RETRY_AFTER_MS.length + 1);
      const event = await eventually(async () => {
        const body = (await requestJson(t, 'GET', `/webhooks/${webhookId}/events/${eventId}`)).body;
        return body.status === 'failed' && body;
      });
      assert.equal(event.next_attempt_at, null);
      assert.equal(receiver.received.length, 8);
      assert.equal(new Set(receiver.received.map((hook) => hook.headers['svix-id'])).size, 1);
      const webhook = (await t.resend.webhooks.get(webhookId)).data as unknown as { status: string; disabled_reason: string };
      assert.equal(webhook.status, 'disabled');
      assert.match(webhook.disabled_reason, /^Every delivery failed for 1 day, since /);
    });
  });
}
