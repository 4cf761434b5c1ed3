import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

for (const dialect of dialects) {
  describe(`topics (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates (201), gets, updates and deletes topics through the SDK; visibility defaults to private', async () => {
      const body = { name: 'Product updates', description: 'Monthly', default_subscription: 'opt_in', visibility: 'public' };
      const created = await requestJson(t, 'POST', '/topics', body);
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, { object: 'topic', id: created.body.id });
      const id = created.body.id as string;
      const { data: got } = await t.resend.topics.get(id);
      assert.deepEqual({ ...got!, created_at: 'x' }, {
        object: 'topic',
        id,
        name: 'Product updates',
        description: 'Monthly',
        default_subscription: 'opt_in',
        visibility: 'public',
        created_at: 'x',
      });
      const sdk = await t.resend.topics.create({ name: 'Offers', defaultSubscription: 'opt_out' });
      const offers = (await t.resend.topics.get(sdk.data!.id)).data as unknown as Record<string, unknown>;
      assert.equal(offers.visibility, 'private');
      assert.equal(offers.description, null);

      const renamed = await t.resend.topics.update({ id, name: 'Updates', description: 'Weekly' });
      assert.deepEqual(renamed.data, { object: 'topic', id } as never);
      const sameDefault = await requestJson(t, 'PATCH', `/topics/${id}`, { visibility: 'private', default_subscription: 'opt_in' });
      assert.equal(sameDefault.status, 200, 'the same default is no change');
      const { body: updated } = await requestJson(t, 'GET', `/topics/${id}`);
      assert.deepEqual([updated.name, updated.description, updated.visibility], ['Updates', 'Weekly', 'private']);

      assert.deepEqual((await t.resend.topics.remove(id)).data, { object: 'topic', id, deleted: true });
      assert.deepEqual((await t.resend.topics.get(id)).error, { statusCode: 404, name: 'not_found', message: 'Topic not found' });
    });

    it('enforces name ≤ 50, description ≤ 200, the two subscriptions and visibilities, and a fixed default', async () => {
      const bad = [
        [{ default_subscription: 'opt_in' }, 'missing_required_field', /`name`/],
        [{ name: 'x' }, 'missing_required_field', /`default_subscription`/],
        [{ name: 'n'.repeat(51), default_subscription: 'opt_in' }, 'validation_error', /`name`.*50/],
        [{ name: 'x', description: 'd'.repeat(201), default_subscription: 'opt_in' }, 'validation_error', /`description`.*200/],
        [{ name: 'x', default_subscription: 'maybe' }, 'validation_error', /`default_subscription`/],
        [{ name: 'x', default_subscription: 'opt_in', visibility: 'secret' }, 'validation_error', /`visibility`/],
      ] as const;
      for (const [body, name, message] of bad) {
        const response = await requestJson(t, 'POST', '/topics', body);
        assert.equal(response.status, 422, JSON.stringify(body));
        assert.equal(response.body.name, name);
        assert.match(response.body.message, message);
      }
      const longest = { name: 'n'.repeat(50), description: 'd'.repeat(200), default_subscription: 'opt_in' };
      const ok = await requestJson(t, 'POST', '/topics', longest);
      assert.equal(ok.status, 201);
      const immutable = await requestJson(t, 'PATCH', `/topics/${ok.body.id}`, { default_subscription: 'opt_out' });
      assert.equal(immutable.status, 422);
      assert.match(immutable.body.message, /`default_subscription`.*cannot be changed/);
      assert.equal((await t.resend.topics.get(ok.body.id)).data!.default_subscription, 'opt_in');
      assert.equal((await requestJson(t, 'PATCH', `/topics/${ok.body.id}`, { name: 'n'.repeat(51) })).status, 422);
    });

    it('lists topics always paginated (a newer endpoint): 20 when limit is omitted', async () => {
      const fresh = await startApp(dialect, { worker: false });
      try {
        for (let i = 0; i < 25; i++) await fresh.resend.topics.create({ name: `Topic ${i}`, defaultSubscription: 'opt_in' });
        const first = await fresh.fetch('/topics');
        const body = (await first.json()) as { object: string; has_more: boolean; data: { name: string }[] };
        assert.equal(body.object, 'list');
        assert.equal(body.has_more, true);
        assert.equal(body.data.length, 20);
        assert.equal(body.data[0]!.name, 'Topic 24');
        assert.equal((await fresh.resend.topics.list()).data!.data.length, 20);
      } finally {
        await fresh.close();
      }
    });

    it('lists every topic with the contact’s subscription, its own choice or the default, by id or email', async () => {
      const fresh = await startApp(dialect, { worker: false });
      try {
        const a = (await fresh.resend.topics.create({ name: 'A', description: 'about A', defaultSubscription: 'opt_in' })).data!.id;
        const b = (await fresh.resend.topics.create({ name: 'B', defaultSubscription: 'opt_out' })).data!.id;
        const topics = [{ id: b, subscription: 'opt_in' as const }];
        const contact = (await fresh.resend.contacts.create({ email: 'sub@example.com', topics })).data!.id;
        const expected = [
          { id: b, name: 'B', description: null, subscription: 'opt_in' },
          { id: a, name: 'A', description: 'about A', subscription: 'opt_in' },
        ];
        assert.deepEqual((await fresh.resend.contacts.topics.list({ id: contact })).data!.data, expected);
        assert.deepEqual((await fresh.resend.contacts.topics.list({ email: 'sub@example.com' })).data!.data, expected);
        const page = await fresh.resend.contacts.topics.list({ id: contact, limit: 1 });
        assert.deepEqual([page.data!.has_more, page.data!.data.length], [true, 1]);
        assert.equal((await fresh.resend.contacts.topics.list({ email: 'nobody@example.com' })).error?.statusCode, 404);
        await fresh.resend.topics.remove(b);
        assert.deepEqual((await fresh.resend.contacts.topics.list({ id: contact })).data!.data.map((row) => row.id), [a]);
        assert.deepEqual(await fresh.ctx.db.selectFrom('contact_topics').selectAll().execute(), [], 'its choices went with it');
      } finally {
        await fresh.close();
      }
    });

    it('sets a contact’s subscriptions from a bare array (the SDK) or {topics: [...]} (the spec)', async () => {
      const topic = (await t.resend.topics.create({ name: 'Digest', defaultSubscription: 'opt_in' })).data!.id;
      const contact = (await t.resend.contacts.create({ email: 'digest@example.com' })).data!.id;
      const subscription = async () =>
        (await t.resend.contacts.topics.list({ id: contact, limit: 100 })).data!.data.find((row) => row.id === topic)!.subscription;

      const bare = await t.resend.contacts.topics.update({ email: 'digest@example.com', topics: [{ id: topic, subscription: 'opt_out' }] });
      const expected = { object: 'contact_topics', id: contact, contact_id: contact, topics: [{ id: topic, subscription: 'opt_out' }] };
      assert.deepEqual(bare.data, expected as never);
      assert.equal(await subscription(), 'opt_out');
      const wrapped = await requestJson(t, 'PATCH', `/contacts/${contact}/topics`, { topics: [{ id: topic, subscription: 'opt_in' }] });
      assert.equal(wrapped.status, 200);
      assert.equal(await subscription(), 'opt_in');

      const unknown = await t.resend.contacts.topics.update({ id: contact, topics: [{ id: 'nope', subscription: 'opt_in' }] });
      assert.equal(unknown.error?.statusCode, 422);
      assert.match(unknown.error.message, /`topics\[0\]\.id`/);
      const badSubscription = await requestJson(t, 'PATCH', `/contacts/${contact}/topics`, [{ id: topic, subscription: 'yes' }]);
      assert.equal(badSubscription.status, 422);
      assert.match(badSubscription.body.message, /`topics\[0\]\.subscription`/);
      const missing = await requestJson(t, 'PATCH', `/contacts/${contact}/topics`, {});
      assert.deepEqual(missing.body, { statusCode: 422, name: 'missing_required_field', message: 'Missing `topics` field.' });
      assert.equal(await subscription(), 'opt_in', 'refused updates changed nothing');
    });
  });
}
