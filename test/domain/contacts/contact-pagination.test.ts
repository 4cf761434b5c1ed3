import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, requestJson, startApp, type TestApp } from '../../support/harness.ts';

for (const dialect of dialects) {
  describe(`pagination of contacts, segments and topics (${dialect})`, () => {
    let t: TestApp;
    let segment: string;
    const created: string[] = []; // oldest first
    before(async () => {
      t = await startApp(dialect, { worker: false });
      segment = (await t.resend.segments.create({ name: 'All 45' })).data!.id;
      for (let i = 0; i < 45; i++) {
        const { data } = await t.resend.contacts.create({ email: `c${i}@example.com`, segments: [{ id: segment }] });
        created.push(data!.id);
      }
    });
    after(() => t.close());

    it('returns all 45 contacts when limit is omitted (an older endpoint), newest first', async () => {
      const all = await t.resend.contacts.list();
      assert.equal(all.data!.has_more, false);
      assert.deepEqual(all.data!.data.map((c) => c.id), [...created].reverse());
      const segmentAll = await t.resend.contacts.list({ segmentId: segment });
      assert.deepEqual(segmentAll.data!.data.map((c) => c.id), [...created].reverse());
    });

    for (const [label, options] of [['GET /contacts', {}], ['GET /segments/:id/contacts', { segment: true }]] as const) {
      it(`${label}: cursors walk forward and back over 45 contacts with no gap and no repeat`, async () => {
        const scope = 'segment' in options ? { segmentId: segment } : {};
        const forward: string[] = [];
        const hasMore: boolean[] = [];
        let cursor: string | undefined;
        do {
          const { data } = await t.resend.contacts.list({ ...scope, limit: 10, ...(cursor ? { after: cursor } : {}) });
          forward.push(...data!.data.map((c) => c.id));
          hasMore.push(data!.has_more);
          cursor = data!.has_more ? data!.data.at(-1)!.id : undefined;
        } while (cursor);
        assert.deepEqual(forward, [...created].reverse());
        assert.deepEqual(hasMore, [true, true, true, true, false]);

        const back: string[] = [];
        cursor = created[0];
        let more = true;
        while (more) {
          const { data } = await t.resend.contacts.list({ ...scope, limit: 10, before: cursor });
          back.unshift(...data!.data.map((c) => c.id));
          more = data!.has_more;
          cursor = data!.data[0]?.id;
        }
        assert.deepEqual(back, [...created].slice(1).reverse(), 'everything newer than the oldest, in order');
      });
    }

    it('pages a contact’s segments; contact properties (a newer list) paginate by default', async () => {
      for (let i = 0; i < 3; i++) {
        const segmentId = (await t.resend.segments.create({ name: `S${i}` })).data!.id;
        await t.resend.contacts.segments.add({ contactId: created[0]!, segmentId });
      }
      const segments = await t.resend.contacts.segments.list({ contactId: created[0]!, limit: 2 });
      assert.deepEqual([segments.data!.data.length, segments.data!.has_more], [2, true]);
      const rest = await t.resend.contacts.segments.list({ contactId: created[0]!, limit: 2, after: segments.data!.data[1]!.id });
      assert.deepEqual([rest.data!.data.length, rest.data!.has_more], [2, false]);

      for (let i = 0; i < 22; i++) await t.resend.contactProperties.create({ key: `p${i}`, type: 'string' });
      const properties = await t.resend.contactProperties.list();
      assert.deepEqual([properties.data!.data.length, properties.data!.has_more], [20, true]);
    });

    it('answers 422 validation_error for a bad limit, both cursors, or a malformed cursor, on every new list', async () => {
      const paths = [
        '/contacts',
        `/segments/${segment}/contacts`,
        `/audiences/${segment}/contacts`,
        '/segments',
        '/audiences',
        '/topics',
        '/contact-properties',
        '/contacts/imports',
        `/contacts/${created[0]}/segments`,
        `/contacts/${created[0]}/topics`,
      ];
      for (const path of paths) {
        for (const query of ['limit=0', 'limit=101', 'limit=abc', `after=${created[1]}&before=${created[3]}`, 'after=not-an-id']) {
          const { status, body } = await requestJson(t, 'GET', `${path}?${query}`);
          assert.equal(status, 422, `${path}?${query}`);
          assert.equal(body.name, 'validation_error');
        }
      }
    });
  });
}
