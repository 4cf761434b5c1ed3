import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { recordEngagement, type Engagement } from '../../../src/domain/events/email-events.ts';
import * as emails from '../../../src/store/emails.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

for (const dialect of dialects) {
  describe(`recordEngagement (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    before(async () => {
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      // The log keeps an event only for an endpoint subscribed to it.
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.opened', 'email.clicked'] });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    async function deliveredEmail(): Promise<string> {
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: ['b@example.com', 'c@example.com'], subject: 's', html: '<p>x</p>' });
      const id = data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, id))?.last_event === 'delivered');
      return id;
    }

    async function record(id: string, engagement: Engagement): Promise<void> {
      const email = (await emails.findEmailById(t.ctx.db, id))!;
      await t.ctx.writer.transaction((tx) => recordEngagement(t.ctx, tx, email, engagement, '2026-11-27 10:00:00.000+00'));
    }

    const statuses = async (id: string) => Object.fromEntries((await emails.findRecipients(t.ctx.db, id)).map((r) => [r.address, r.status]));

    it('raises the recipient and the email, and keeps a bot apart', async () => {
      const id = await deliveredEmail();
      await record(id, { type: 'opened', recipient: 'b@example.com', bot: 'HEAD request' });
      assert.equal((await emails.findEmailById(t.ctx.db, id))!.last_event, 'delivered');
      assert.deepEqual(await statuses(id), { 'b@example.com': 'delivered', 'c@example.com': 'delivered' });

      await record(id, { type: 'clicked', recipient: 'b@example.com', link: 'https://example.com/a?b=c#d', client: { ipAddress: '192.0.2.1', userAgent: 'UA' } });
      await record(id, { type: 'opened', recipient: 'b@example.com' });
      assert.equal((await emails.findEmailById(t.ctx.db, id))!.last_event, 'clicked', 'an open does not lower a click');
      assert.deepEqual(await statuses(id), { 'b@example.com': 'clicked', 'c@example.com': 'delivered' });

      const events = (await emails.listEvents(t.ctx.db, id)).filter((e) => ['opened', 'clicked'].includes(e.type));
      assert.deepEqual(
        events.map((e) => [e.type, e.bot, e.link, e.response]),
        [
          ['opened', 1, null, 'HEAD request'],
          ['clicked', 0, 'https://example.com/a?b=c#d', null],
          ['opened', 0, null, null],
        ],
      );
      const logged = await t.ctx.db.selectFrom('events').select(['type', 'data']).where('email_id', '=', id).where('type', 'in', ['email.opened', 'email.clicked']).orderBy('id').execute();
      assert.deepEqual(logged.map((e) => e.type), ['email.clicked', 'email.opened']);
      assert.deepEqual(JSON.parse(logged[0]!.data).click, { ipAddress: '192.0.2.1', link: 'https://example.com/a?b=c#d', timestamp: '2026-11-27T10:00:00.000Z', userAgent: 'UA' });
    });

    it('never lowers a complaint, and an unsubscribe changes no state', async () => {
      const id = await deliveredEmail();
      await t.ctx.writer.transaction((tx) => emails.setLastEvent(tx, id, 'complained'));
      await record(id, { type: 'opened', recipient: 'c@example.com' });
      await record(id, { type: 'unsubscribed', recipient: 'c@example.com' });
      assert.equal((await emails.findEmailById(t.ctx.db, id))!.last_event, 'complained');
      assert.deepEqual(await statuses(id), { 'b@example.com': 'delivered', 'c@example.com': 'opened' });
    });
  });
}
