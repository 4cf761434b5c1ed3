import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { listContacts } from '../../../src/domain/contacts/contacts.ts';
import { dialects, startApp, type TestApp } from '../../support/harness.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';

// The dashboard's search: part of an email, any case, LIKE's wildcards taken literally.
for (const dialect of dialects) {
  describe(`contact search by email (${dialect})`, () => {
    let t: TestApp;
    let segment: string;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      segment = (await t.resend.segments.create({ name: 'Some' })).data!.id;
      for (const email of ['ada_l@example.com', 'adaxl@example.com', 'grace@example.org']) {
        await t.resend.contacts.create({ email, segments: email.startsWith('ada_') ? [{ id: segment }] : [] });
      }
    });
    after(() => t.close());

    const page = { limit: 10, after: undefined, before: undefined };
    const emails = async (text: string, segmentId?: string) =>
      (await listContacts(t.ctx, DEFAULT_PROJECT_ID, page, segmentId, { email: text })).data.map((c) => c.email).sort();

    it('finds contacts whose email contains the text, whatever its case', async () => {
      assert.deepEqual(await emails('EXAMPLE.COM'), ['ada_l@example.com', 'adaxl@example.com']);
      assert.deepEqual(await emails('grace'), ['grace@example.org']);
      assert.deepEqual(await emails('nobody'), []);
    });

    it('takes _ and % as themselves, not as wildcards', async () => {
      assert.deepEqual(await emails('ada_'), ['ada_l@example.com']);
      assert.deepEqual(await emails('%'), []);
    });

    it("filters a segment's contacts too", async () => {
      assert.deepEqual(await emails('ada', segment), ['ada_l@example.com']);
    });
  });
}
