import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

for (const dialect of dialects) {
  describe(`contacts (${dialect})`, () => {
    let t: TestApp;
    let vip: string;
    let news: string;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      vip = (await t.resend.segments.create({ name: 'VIP' })).data!.id;
      news = (await t.resend.topics.create({ name: 'News', defaultSubscription: 'opt_out' })).data!.id;
      await t.resend.contactProperties.create({ key: 'company', type: 'string' });
      await t.resend.contactProperties.create({ key: 'seats', type: 'number' });
    });
    after(() => t.close());

    it('creates a contact with names, flag, properties, segments and topics, and reads it by id and by email', async () => {
      const { data, error } = await t.resend.contacts.create({
        email: 'steve@example.com',
        firstName: 'Steve',
        lastName: 'Wozniak',
        unsubscribed: false,
        properties: { company: 'Apple', seats: 3 },
        segments: [{ id: vip }],
        topics: [{ id: news, subscription: 'opt_in' }],
      });
      assert.equal(error, null);
      assert.equal(data.object, 'contact');
      const expected = {
        object: 'contact',
        id: data.id,
        email: 'steve@example.com',
        first_name: 'Steve',
        last_name: 'Wozniak',
        unsubscribed: false,
        properties: { company: { value: 'Apple', type: 'string' }, seats: { value: 3, type: 'number' } },
      };
      for (const key of [data.id, 'steve@example.com']) {
        const { data: got } = await t.resend.contacts.get(key);
        const { created_at, ...rest } = got!;
        assert.match(created_at, /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d{3}\+00$/);
        assert.deepEqual(rest, expected);
      }
      const segments = await t.resend.contacts.segments.list({ contactId: data.id });
      assert.deepEqual(segments.data!.data.map((s) => s.id), [vip]);
      const topics = await t.resend.contacts.topics.list({ id: data.id });
      assert.deepEqual(topics.data!.data.map((s) => [s.id, s.subscription]), [[news, 'opt_in']]);
    });

    it('answers 201, and takes segments as ["id"] as well as [{id}]', async () => {
      const { status, body } = await requestJson(t, 'POST', '/contacts', { email: 'ids@example.com', segments: [vip] });
      assert.equal(status, 201);
      assert.deepEqual(Object.keys(body).sort(), ['id', 'object']);
      const { data } = await t.resend.contacts.segments.list({ email: 'ids@example.com' });
      assert.deepEqual(data!.data.map((s) => s.id), [vip]);
    });

    it('creating an email that exists answers the same id (whatever the case), joins new segments, changes nothing else', async () => {
      const first = await t.resend.contacts.create({ email: 'Dup@Example.com', firstName: 'First' });
      const other = (await t.resend.segments.create({ name: 'Other' })).data!.id;
      const again = await t.resend.contacts.create({ email: 'dup@example.COM', firstName: 'Second', segments: [{ id: other }] });
      assert.equal(again.data!.id, first.data!.id);
      const { data } = await t.resend.contacts.get('dup@example.com');
      assert.equal(data!.email, 'dup@example.com', 'stored lowercased');
      assert.equal(data!.first_name, 'First');
      const segments = await t.resend.contacts.segments.list({ email: 'DUP@example.com' });
      assert.deepEqual(segments.data!.data.map((s) => s.id), [other]);
    });

    it('finds, updates and deletes by an address with "+" put in the path unencoded, as the SDK does', async () => {
      const { data } = await t.resend.contacts.create({ email: 'a+b@example.com' });
      assert.equal((await t.resend.contacts.get('a+b@example.com')).data?.id, data!.id);
      assert.equal((await t.resend.contacts.get({ email: 'A+B@EXAMPLE.COM' })).data?.id, data!.id);
      assert.equal((await requestJson(t, 'GET', '/contacts/a%2Bb%40example.com')).body.id, data!.id);
      const updated = await t.resend.contacts.update({ email: 'a+b@example.com', firstName: 'Plus' });
      assert.deepEqual(updated.data, { object: 'contact', id: data!.id });
      const removed = await t.resend.contacts.remove({ email: 'a+b@example.com' });
      assert.deepEqual(removed.data, { object: 'contact', id: data!.id, contact: 'a+b@example.com', deleted: true });
      assert.equal((await t.resend.contacts.get('a+b@example.com')).error?.statusCode, 404);
    });

    it('updates names (null clears), the unsubscribed flag, the email and properties (null removes one)', async () => {
      const properties = { company: 'X', seats: 1 };
      const { data } = await t.resend.contacts.create({ email: 'upd@example.com', firstName: 'A', lastName: 'B', properties });
      await t.resend.contacts.update({ id: data!.id, firstName: null, unsubscribed: true, properties: { company: null, seats: 9 } });
      assert.equal((await requestJson(t, 'PATCH', `/contacts/${data!.id}`, { email: 'New@Example.com' })).status, 200);
      const { data: got } = await t.resend.contacts.get(data!.id);
      assert.equal(got!.email, 'new@example.com');
      assert.equal(got!.first_name, null);
      assert.equal(got!.last_name, 'B');
      assert.equal(got!.unsubscribed, true);
      assert.deepEqual(got!.properties, { seats: { value: 9, type: 'number' } });
      const taken = await t.resend.contacts.create({ email: 'taken@example.com' });
      const clash = await requestJson(t, 'PATCH', `/contacts/${taken.data!.id}`, { email: 'new@example.com' });
      assert.equal(clash.status, 422);
    });

    it('deleting removes memberships and subscriptions with the contact; deleting again still answers deleted', async () => {
      const topics = [{ id: news, subscription: 'opt_in' as const }];
      const { data } = await t.resend.contacts.create({ email: 'gone@example.com', segments: [{ id: vip }], topics });
      const removed = await t.resend.contacts.remove(data!.id);
      assert.deepEqual(removed.data, { object: 'contact', id: data!.id, contact: data!.id, deleted: true });
      const memberships = await t.ctx.db.selectFrom('segment_contacts').selectAll().where('contact_id', '=', data!.id).execute();
      const subscriptions = await t.ctx.db.selectFrom('contact_topics').selectAll().where('contact_id', '=', data!.id).execute();
      assert.deepEqual([memberships.length, subscriptions.length], [0, 0]);
      const again = await t.resend.contacts.remove('gone@example.com');
      assert.deepEqual(again.data, { object: 'contact', contact: 'gone@example.com', deleted: true });
    });

    it('lists every contact when limit is omitted, newest first, and one segment with segment_id or /segments/:id/contacts', async () => {
      const segment = (await t.resend.segments.create({ name: 'Listed' })).data!.id;
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        ids.push((await t.resend.contacts.create({ email: `listed${i}@example.com`, segments: [{ id: segment }] })).data!.id);
      }
      const all = await t.resend.contacts.list();
      assert.equal(all.data!.has_more, false);
      const count = await t.ctx.db.selectFrom('contacts').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
      assert.equal(all.data!.data.length, Number(count.n));
      assert.deepEqual(all.data!.data.slice(0, 3).map((c) => c.id), [...ids].reverse());
      assert.deepEqual(Object.keys(all.data!.data[0]!).sort(), ['created_at', 'email', 'first_name', 'id', 'last_name', 'unsubscribed']);
      const bySdk = await t.resend.contacts.list({ segmentId: segment });
      assert.deepEqual(bySdk.data!.data.map((c) => c.id), [...ids].reverse());
      for (const query of [`segment_id=${segment}`, `audience_id=${segment}`]) {
        const { body } = await requestJson(t, 'GET', `/contacts?${query}`);
        assert.deepEqual(body.data.map((c: { id: string }) => c.id), [...ids].reverse());
      }
    });

    it('answers errors in Resend’s shape', async () => {
      const missing = await requestJson(t, 'POST', '/contacts', {});
      assert.deepEqual(missing.body, { statusCode: 422, name: 'missing_required_field', message: 'Missing `email` field.' });
      const invalid = await t.resend.contacts.create({ email: 'not an email' });
      assert.equal(invalid.error?.name, 'validation_error');
      assert.match(invalid.error.message, /`email`/);
      const unknown = await t.resend.contacts.get('nobody@example.com');
      assert.deepEqual(unknown.error, { statusCode: 404, name: 'not_found', message: 'Contact not found' });
      assert.equal((await t.resend.contacts.update({ id: '01a2007a-0000-7000-8000-000000000000', firstName: 'x' })).error?.statusCode, 404);
      const badSegment = await t.resend.contacts.create({ email: 'x@example.com', segments: [{ id: 'nope' }] });
      assert.equal(badSegment.error?.statusCode, 422);
      assert.match(badSegment.error.message, /`segments\[0\]`/);
      const badTopic = await t.resend.contacts.create({ email: 'x@example.com', topics: [{ id: 'nope', subscription: 'opt_in' }] });
      assert.match(badTopic.error!.message, /`topics\[0\]\.id`/);
      const topics = [{ id: news, subscription: 'maybe' }];
      const badSubscription = await requestJson(t, 'POST', '/contacts', { email: 'x@example.com', topics });
      assert.equal(badSubscription.status, 422);
      assert.equal((await t.resend.contacts.get('x@example.com')).error?.statusCode, 404, 'nothing was stored');
      assert.equal((await requestJson(t, 'GET', '/contacts?segment_id=01a2007a-0000-7000-8000-000000000000')).status, 404);
    });
  });
}
