import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const EVENTS = ['contact.created', 'contact.updated', 'contact.deleted', 'contact.topics.updated', 'topic.created', 'topic.updated', 'topic.deleted', 'domain.created', 'domain.updated', 'domain.deleted'];

for (const dialect of dialects) {
  describe(`contact, topic and domain events (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    const received = (type: string) => receiver.received.filter((hook) => hook.payload.type === type).map((hook) => hook.payload.data);

    before(async () => {
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: EVENTS as never });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('posts contact.created, updated, topics.updated and deleted, with the contact as it stands', async () => {
      const segment = (await t.resend.segments.create({ name: 'Newsletter' })).data!.id;
      const topic = (await t.resend.topics.create({ name: 'News', defaultSubscription: 'opt_in' })).data!.id;
      const id = (await t.resend.contacts.create({ email: 'Jane@Example.com', firstName: 'Jane', segments: [{ id: segment }] })).data!.id;
      await t.resend.contacts.update({ id, lastName: 'Doe' });
      await t.resend.contacts.topics.update({ id, topics: [{ id: topic, subscription: 'opt_out' }] });
      await t.resend.contacts.remove(id);
      await eventually(() => received('contact.deleted').length === 1);

      const [created] = received('contact.created');
      assert.deepEqual({ ...created, created_at: undefined, updated_at: undefined }, {
        id,
        audience_id: segment,
        segment_ids: [segment],
        created_at: undefined,
        updated_at: undefined,
        email: 'jane@example.com',
        first_name: 'Jane',
        last_name: null,
        unsubscribed: false,
      });
      assert.equal(received('contact.updated')[0]!.last_name, 'Doe');
      assert.deepEqual(received('contact.topics.updated'), [{ email: 'jane@example.com', topics: [{ id: topic, subscription: 'opt_out' }] }]);
      assert.equal(received('contact.deleted')[0]!.id, id);
      // Creating a contact that exists changes nothing, and says nothing.
      await t.resend.contacts.create({ email: 'kim@example.com' });
      await t.resend.contacts.create({ email: 'kim@example.com' });
      await eventually(() => received('contact.created').length === 2);
      assert.equal(received('contact.created').length, 2);
      // The event log itself, not only what has arrived so far: one contact.created for kim.
      const logged = await t.ctx.db.selectFrom('events').select('data').where('type', '=', 'contact.created').execute();
      assert.equal(logged.filter((row) => JSON.parse(row.data).email === 'kim@example.com').length, 1);
    });

    it('posts topic.created, updated and deleted', async () => {
      const id = (await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' })).data!.id;
      await t.resend.topics.update({ id, name: 'Deals' });
      await t.resend.topics.remove(id);
      await eventually(() => received('topic.deleted').some((topic) => topic.id === id));
      const [created] = received('topic.created').filter((topic) => topic.id === id);
      assert.equal(created!.name, 'Offers');
      assert.equal(created!.default_subscription, 'opt_out');
      assert.equal(created!.deleted, false);
      assert.equal(received('topic.updated').find((topic) => topic.id === id)!.name, 'Deals');
      assert.equal(received('topic.deleted').find((topic) => topic.id === id)!.deleted, true);
    });

    it('posts domain.created, updated and deleted, with the records', async () => {
      const id = (await t.resend.domains.create({ name: 'events.example.com' })).data!.id;
      await t.resend.domains.update({ id, tls: 'enforced' });
      await t.resend.domains.remove(id);
      await eventually(() => received('domain.deleted').length === 1);
      const [created] = received('domain.created');
      assert.equal(created!.name, 'events.example.com');
      assert.equal(created!.status, 'not_started');
      assert.ok(created!.records.length >= 3);
      assert.equal(received('domain.updated')[0]!.id, id);
      assert.equal(received('domain.deleted')[0]!.id, id);
    });
  });
}
