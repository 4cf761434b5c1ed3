import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countEmailsByStatus, listRecipients } from '../../../src/domain/broadcasts/broadcast-emails.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';

const MISSING = '01a2007a-0000-7000-8000-000000000000';
const content = { from: 'Acme <news@example.com>', subject: 'News', html: '<p>Hi</p>' };

for (const dialect of dialects) {
  describe(`a broadcast's emails: counts and recipients (${dialect})`, () => {
    let t: TestApp;
    let sent: string;
    let draft: string;
    before(async () => {
      t = await startApp(dialect);
      const segment = (await t.resend.segments.create({ name: 'Everyone' })).data!.id;
      for (const email of ['ann@example.com', 'bob@example.com', 'cy@example.com']) await t.resend.contacts.create({ email, segments: [{ id: segment }] });
      await t.resend.contacts.create({ email: 'not-in-it@example.com' });
      sent = (await t.resend.broadcasts.create({ ...content, segmentId: segment, send: true })).data!.id;
      draft = (await t.resend.broadcasts.create({ ...content, segmentId: segment })).data!.id;
      // An email of no broadcast, which no count includes.
      await t.resend.emails.send({ ...content, to: 'ann@example.com' });
      await eventually(async () => (await t.resend.broadcasts.get(sent)).data!.status === 'sent');
      await eventually(async () => (await countEmailsByStatus(t.ctx, DEFAULT_PROJECT_ID, sent)).delivered === 3);
    });
    after(() => t.close());

    it('counts the emails of that broadcast only, by status', async () => {
      assert.deepEqual(await countEmailsByStatus(t.ctx, DEFAULT_PROJECT_ID, sent), { delivered: 3 });
      assert.deepEqual(await countEmailsByStatus(t.ctx, DEFAULT_PROJECT_ID, draft), {}, 'a draft has none');
    });

    it('lists each recipient with the status of their email, a page at a time', async () => {
      const first = await listRecipients(t.ctx, DEFAULT_PROJECT_ID, sent, { limit: 2, after: undefined, before: undefined });
      assert.equal(first.has_more, true);
      const second = await listRecipients(t.ctx, DEFAULT_PROJECT_ID, sent, { limit: 2, after: first.data[1]!.id, before: undefined });
      assert.equal(second.has_more, false);
      const all = [...first.data, ...second.data];
      assert.deepEqual(all.map((r) => r.email).sort(), ['ann@example.com', 'bob@example.com', 'cy@example.com']);
      assert.ok(all.every((r) => r.last_event === 'delivered'));
      assert.deepEqual((await listRecipients(t.ctx, DEFAULT_PROJECT_ID, draft, { limit: 10, after: undefined, before: undefined })).data, []);
    });

    it('answers 404 for a broadcast that does not exist', async () => {
      await assert.rejects(countEmailsByStatus(t.ctx, DEFAULT_PROJECT_ID, MISSING), { code: 'not_found' });
      await assert.rejects(listRecipients(t.ctx, DEFAULT_PROJECT_ID, MISSING, { limit: 10, after: undefined, before: undefined }), { code: 'not_found' });
    });
  });
}
