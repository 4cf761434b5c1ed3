import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { eligibleRecipients } from '../../../src/domain/recipients/policy.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

const MISSING = '01a2007a-0000-7000-8000-000000000000';

for (const dialect of dialects) {
  describe(`segments and audiences (${dialect})`, () => {
    let t: TestApp;
    before(async () => {
      t = await startApp(dialect, { worker: false });
    });
    after(() => t.close());

    it('creates (201), gets, lists (all when limit is omitted), renames and deletes segments through the SDK', async () => {
      const created = await requestJson(t, 'POST', '/segments', { name: 'Registered users' });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, { object: 'segment', id: created.body.id, name: 'Registered users' });
      const id = created.body.id as string;
      const second = await t.resend.segments.create({ name: 'Second' });
      const { data: got } = await t.resend.segments.get(id);
      assert.deepEqual({ ...got!, created_at: 'x' }, { object: 'segment', id, name: 'Registered users', created_at: 'x' });
      const list = await t.resend.segments.list();
      assert.deepEqual(list.data!.data.map((s) => s.id).slice(0, 2), [second.data!.id, id]);
      assert.equal(list.data!.has_more, false);
      assert.deepEqual((await t.resend.segments.update(id, { name: 'Renamed' })).data, { object: 'segment', id });
      assert.equal((await t.resend.segments.get(id)).data!.name, 'Renamed');
      assert.deepEqual((await t.resend.segments.remove(id)).data, { object: 'segment', id, deleted: true });
    });

    it('answers as Resend does: a missing segment is "Audience not found", deleting one still answers deleted', async () => {
      assert.deepEqual((await t.resend.segments.get(MISSING)).error, { statusCode: 404, name: 'not_found', message: 'Audience not found' });
      assert.equal((await t.resend.segments.update(MISSING, { name: 'x' })).error?.statusCode, 404);
      assert.deepEqual((await t.resend.segments.remove(MISSING)).data, { object: 'segment', id: MISSING, deleted: true });
      const missing = await requestJson(t, 'POST', '/segments', {});
      assert.deepEqual(missing.body, { statusCode: 422, name: 'missing_required_field', message: 'Missing `name` field.' });
      assert.equal((await requestJson(t, 'POST', '/segments', { name: ' ' })).status, 422);
    });

    it('answers GET /segments/metrics: each segment\'s contacts, subscribed or not, and each contact once in the totals', async () => {
      const fresh = await startApp(dialect, { worker: false });
      try {
        const early = (await fresh.resend.segments.create({ name: 'Early' })).data!.id;
        const late = (await fresh.resend.segments.create({ name: 'Late' })).data!.id;
        await fresh.resend.contacts.create({ email: 'a@example.com', segments: [{ id: early }] });
        const dayAfter = new Date(fresh.clock.now() + 12 * 3600_000).toISOString();
        fresh.advance(24 * 3600_000);
        await fresh.resend.contacts.create({ email: 'b@example.com', segments: [{ id: early }] });
        await fresh.resend.contacts.create({ email: 'c@example.com', unsubscribed: true, segments: [{ id: early }, { id: late }] });
        const metrics = async (query = '') => {
          const { data, error } = await fresh.resend.get<Record<string, unknown>>(`/segments/metrics${query}`);
          assert.equal(error, null, JSON.stringify(error));
          return data;
        };
        const row = (id: string, name: string, all: number, unsubscribers: number) => ({ segment_id: id, segment_name: name, all_contacts: all, subscribers: all - unsubscribers, unsubscribers });
        assert.deepEqual(await metrics(), {
          object: 'segments_metrics',
          totals: { all_contacts: 3, subscribers: 2, unsubscribers: 1 },
          data: [row(late, 'Late', 1, 1), row(early, 'Early', 3, 1)],
        });
        assert.deepEqual((await metrics('?sort_by=date&sort_order=asc')).data, [row(early, 'Early', 3, 1), row(late, 'Late', 1, 1)]);
        assert.deepEqual(await metrics(`?filter.segmentId[]=${late}`), { object: 'segments_metrics', totals: { all_contacts: 1, subscribers: 0, unsubscribers: 1 }, data: [row(late, 'Late', 1, 1)] });
        assert.deepEqual((await metrics(`?segment_id=${early}&start_date=${dayAfter}`)).data, [row(early, 'Early', 2, 1)], 'only the contacts created since');
        for (const query of ['?sort_by=name', '?sort_order=up', '?segment_id=nope', '?start_date=yesterday']) {
          assert.equal((await fresh.resend.get(`/segments/metrics${query}`)).error?.statusCode, 422, query);
        }
      } finally {
        await fresh.close();
      }
    });

    it('serves the legacy /audiences routes on the same data', async () => {
      const created = await requestJson(t, 'POST', '/audiences', { name: 'Legacy' });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, { object: 'audience', id: created.body.id, name: 'Legacy' });
      const id = created.body.id as string;
      assert.equal((await t.resend.segments.get(id)).data!.name, 'Legacy', 'an audience is a segment');
      const got = await requestJson(t, 'GET', `/audiences/${id}`);
      assert.deepEqual({ ...got.body, created_at: 'x' }, { object: 'audience', id, name: 'Legacy', created_at: 'x' });
      const list = await requestJson(t, 'GET', '/audiences');
      assert.ok(list.body.data.some((a: { id: string }) => a.id === id));
      assert.deepEqual((await requestJson(t, 'DELETE', `/audiences/${id}`)).body, { object: 'audience', id, deleted: true });
      assert.equal((await requestJson(t, 'GET', `/audiences/${id}`)).status, 404);
    });

    it('serves contacts under an audience: created into it, seen, updated and removed through it only', async () => {
      const audience = (await t.resend.segments.create({ name: 'Newsletter' })).data!.id;
      const other = (await t.resend.segments.create({ name: 'Other' })).data!.id;
      const created = await t.resend.contacts.create({ audienceId: audience, email: 'old@example.com', firstName: 'Old' });
      assert.equal(created.data!.object, 'contact');
      const id = created.data!.id;
      const again = await requestJson(t, 'POST', `/audiences/${other}/contacts`, { email: 'OLD@example.com' });
      assert.equal(again.status, 201);
      assert.equal(again.body.id, id, 'the same contact joins the second audience');
      assert.equal((await t.resend.contacts.get({ audienceId: audience, email: 'old@example.com' })).data!.first_name, 'Old');
      await t.resend.contacts.update({ audienceId: audience, id, lastName: 'Timer' });
      assert.equal((await t.resend.contacts.get(id)).data!.last_name, 'Timer');
      const listed = await requestJson(t, 'GET', `/audiences/${audience}/contacts`);
      assert.deepEqual(listed.body.data.map((c: { id: string }) => c.id), [id]);

      const removed = await t.resend.contacts.remove({ audienceId: audience, id });
      assert.deepEqual(removed.data, { object: 'contact', id, contact: id, deleted: true });
      assert.equal((await t.resend.contacts.get({ audienceId: audience, id })).error?.statusCode, 404, 'no longer in that audience');
      assert.equal((await t.resend.contacts.get({ audienceId: other, id })).data?.id, id, 'still in the other one');
      assert.equal((await t.resend.contacts.update({ audienceId: audience, id, firstName: 'x' })).error?.statusCode, 404);
      const noAudience = await requestJson(t, 'POST', `/audiences/${MISSING}/contacts`, { email: 'z@example.com' });
      assert.equal(noAudience.body.message, 'Audience not found');
    });

    it('adds, lists and removes a contact’s segments by contact id or email; deleting a segment keeps its contacts', async () => {
      const a = (await t.resend.segments.create({ name: 'A' })).data!.id;
      const b = (await t.resend.segments.create({ name: 'B' })).data!.id;
      const contact = (await t.resend.contacts.create({ email: 'member@example.com' })).data!.id;
      const added = await t.resend.contacts.segments.add({ contactId: contact, segmentId: a });
      assert.deepEqual(added.data, { object: 'contact_segment', id: a, contact_id: contact, segment_id: a });
      await t.resend.contacts.segments.add({ email: 'member@example.com', segmentId: b });
      await t.resend.contacts.segments.add({ email: 'member@example.com', segmentId: b });
      const list = await t.resend.contacts.segments.list({ email: 'member@example.com' });
      assert.deepEqual(list.data!.data.map((s) => [s.id, s.name]), [[b, 'B'], [a, 'A']]);
      const removed = await t.resend.contacts.segments.remove({ email: 'member@example.com', segmentId: a });
      const expected = { object: 'contact_segment', id: a, audienceId: a, contact_id: contact, segment_id: a, deleted: true };
      assert.deepEqual(removed.data, expected);
      assert.deepEqual((await t.resend.contacts.list({ segmentId: a })).data!.data, []);

      assert.equal((await t.resend.contacts.segments.add({ contactId: contact, segmentId: MISSING })).error?.message, 'Audience not found');
      const noContact = await t.resend.contacts.segments.add({ email: 'nobody@example.com', segmentId: b });
      assert.equal(noContact.error?.message, 'Contact not found');
      assert.equal((await t.resend.contacts.segments.list({ contactId: MISSING })).error?.statusCode, 404);

      await t.resend.segments.remove(b);
      assert.equal((await t.resend.contacts.get(contact)).data?.id, contact);
      assert.deepEqual((await t.resend.contacts.segments.list({ contactId: contact })).data!.data, []);
    });

    it('selects the contacts of a segment the recipient policy allows on a topic (for broadcasts)', async () => {
      const segment = (await t.resend.segments.create({ name: 'Fan-out' })).data!.id;
      const optIn = (await t.resend.topics.create({ name: 'Default in', defaultSubscription: 'opt_in' })).data!.id;
      const optOut = (await t.resend.topics.create({ name: 'Default out', defaultSubscription: 'opt_out' })).data!.id;
      const make = async (email: string, extra: object = {}) =>
        (await t.resend.contacts.create({ email, segments: [{ id: segment }], ...extra })).data!.id;
      const plain = await make('plain@example.com');
      await make('unsub@example.com', { unsubscribed: true, topics: [{ id: optIn, subscription: 'opt_in' }] });
      const both = (subscription: 'opt_in' | 'opt_out') => [optIn, optOut].map((id) => ({ id, subscription }));
      const inBoth = await make('in@example.com', { topics: both('opt_in') });
      const outBoth = await make('out@example.com', { topics: both('opt_out') });
      await t.resend.contacts.create({ email: 'outsider@example.com', topics: [{ id: optOut, subscription: 'opt_in' }] });

      const walk = async (topicId: string | undefined) => {
        const topics = t.ctx.db.selectFrom('topics').select(['id', 'default_subscription']);
        const topic = topicId ? await topics.where('id', '=', topicId).executeTakeFirstOrThrow() : undefined;
        const rows = await eligibleRecipients(t.ctx.db, DEFAULT_PROJECT_ID, MISSING, segment, topic).orderBy('segment_contacts.contact_id', 'desc').execute();
        return rows.map((row) => row.contact_id);
      };
      assert.deepEqual(await walk(undefined), [outBoth, inBoth, plain], 'no topic: everyone but the unsubscribed');
      assert.deepEqual(await walk(optIn), [inBoth, plain], 'default opt_in: all but those who opted out');
      assert.deepEqual(await walk(optOut), [inBoth], 'default opt_out: only those who opted in');
    });
  });
}
