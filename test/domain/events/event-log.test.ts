import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import * as emails from '../../../src/store/emails.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

for (const dialect of dialects) {
  describe(`the event log (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    async function delivered(to: string): Promise<string> {
      const { data, error } = await t.resend.emails.send({ from: 'a@example.com', to, subject: 's', text: 'x' });
      assert.equal(error, null);
      await eventually(async () => (await emails.findEmailById(t.ctx.db, data.id))?.last_event === 'delivered');
      return data.id;
    }

    const logged = async (emailId: string) =>
      (await t.ctx.db.selectFrom('events').select('type').where('email_id', '=', emailId).orderBy('id').execute()).map((row) => row.type);

    it('keeps an event only for the endpoints subscribed to it: nothing reads the others', async () => {
      const unheard = await delivered('b@example.com');
      assert.deepEqual(await logged(unheard), []);
      assert.deepEqual((await emails.listEvents(t.ctx.db, unheard)).map((e) => e.type), ['sent', 'delivered'], "the email's own events stay");

      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.delivered'] });
      const heard = await delivered('c@example.com');
      assert.deepEqual(await logged(heard), ['email.delivered']);
      await eventually(() => receiver.received.some((hook) => hook.payload.data.email_id === heard));
    });
  });
}
