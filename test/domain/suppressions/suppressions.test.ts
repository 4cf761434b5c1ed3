import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { toTimestamp } from '../../../src/time/clock.ts';
import { suppress } from '../../../src/domain/suppressions/suppressions.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const SOURCE = '0192e3a4-2222-7000-8000-000000000000';

for (const dialect of dialects) {
  describe(`the suppression list (${dialect})`, () => {
    let t: TestApp;
    let receiver: WebhookReceiver;
    const received = (type: string) => receiver.received.filter((hook) => hook.payload.type === type).map((hook) => hook.payload.data);

    before(async () => {
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { worker: true, env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['suppression.added', 'suppression.removed'] });
    });
    after(async () => {
      await t.close();
      await receiver.close();
    });

    it('adds (201) a manual entry, gets it by id and by email (any case), and removes it by either', async () => {
      const created = await requestJson(t, 'POST', '/suppressions', { email: 'Jane.Doe@Example.COM' });
      assert.equal(created.status, 201);
      assert.deepEqual(created.body, { object: 'suppression', id: created.body.id });
      const id = created.body.id as string;

      const { data: byId } = await t.resend.suppressions.get(id);
      assert.deepEqual({ ...byId!, created_at: 'x' }, {
        object: 'suppression',
        id,
        email: 'jane.doe@example.com',
        origin: 'manual',
        source_id: null,
        created_at: 'x',
      });
      assert.match(byId!.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}\+00$/);
      assert.deepEqual((await t.resend.suppressions.get('JANE.doe@example.com')).data, byId);

      assert.deepEqual((await t.resend.suppressions.remove('jane.doe@EXAMPLE.com')).data, { object: 'suppression', id, deleted: true });
      assert.deepEqual((await t.resend.suppressions.get(id)).error, { statusCode: 404, name: 'not_found', message: 'Suppression not found' });

      const again = (await t.resend.suppressions.add({ email: 'jane.doe@example.com' })).data!.id;
      assert.notEqual(again, id, 'a new entry once the old one is gone');
      assert.deepEqual((await t.resend.suppressions.remove(again)).data, { object: 'suppression', id: again, deleted: true });
      assert.equal((await t.resend.suppressions.remove(again)).error?.statusCode, 404);
    });

    it('answers the existing entry when an address on the list is added again, and logs it once', async () => {
      const first = (await t.resend.suppressions.add({ email: 'twice@example.com' })).data!.id;
      const second = await t.resend.suppressions.add({ email: 'TWICE@example.com' });
      assert.deepEqual(second.data, { object: 'suppression', id: first });
      await eventually(() => received('suppression.added').some((entry) => entry.email === 'twice@example.com'));
      const logged = await t.ctx.db.selectFrom('events').select('data').where('type', '=', 'suppression.added').execute();
      assert.equal(logged.filter((row) => JSON.parse(row.data).email === 'twice@example.com').length, 1);
    });

    it('posts suppression.added and suppression.removed with the entry', async () => {
      const id = (await t.resend.suppressions.add({ email: 'hooked@example.com' })).data!.id;
      await t.resend.suppressions.remove(id);
      await eventually(() => received('suppression.removed').some((entry) => entry.id === id));
      const added = received('suppression.added').find((data) => data.id === id)!;
      assert.deepEqual({ ...added, created_at: 'x' }, { id, email: 'hooked@example.com', origin: 'manual', source_id: null, created_at: 'x' });
      assert.match(added.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.deepEqual(received('suppression.removed').find((data) => data.id === id), added);
    });

    it('suppress(): a bounce or complaint entry with its source email, once per address, in the caller’s transaction', async () => {
      const at = toTimestamp(t.clock.now());
      const bounced = await t.ctx.writer.transaction((tx) => suppress(t.ctx, tx, DEFAULT_PROJECT_ID, { email: 'Gone@Example.com', origin: 'bounce', sourceId: SOURCE }, at));
      assert.equal(bounced?.email, 'gone@example.com');
      const complained = await t.ctx.writer.transaction((tx) => suppress(t.ctx, tx, DEFAULT_PROJECT_ID, { email: 'gone@example.com', origin: 'complaint', sourceId: null }, at));
      assert.deepEqual(complained, bounced, 'the first entry stays');
      const { data } = await t.resend.suppressions.get('gone@example.com');
      assert.deepEqual([data!.origin, data!.source_id], ['bounce', SOURCE]);
      await assert.rejects(
        t.ctx.writer.transaction(async (tx) => {
          await suppress(t.ctx, tx, DEFAULT_PROJECT_ID, { email: 'rolled-back@example.com', origin: 'complaint', sourceId: SOURCE }, at);
          throw new Error('the caller fails');
        }),
        /the caller fails/,
      );
      assert.equal((await t.resend.suppressions.get('rolled-back@example.com')).error?.statusCode, 404);
      const logged = await t.ctx.db.selectFrom('events').select('data').where('type', '=', 'suppression.added').execute();
      assert.ok(!logged.some((row) => JSON.parse(row.data).email === 'rolled-back@example.com'), 'no event for what was rolled back');
    });

    it('lists newest first, 20 by default, by origin, with after and before', async () => {
      const at = toTimestamp(t.clock.now());
      await t.ctx.writer.transaction((tx) => suppress(t.ctx, tx, DEFAULT_PROJECT_ID, { email: 'spam-report@example.com', origin: 'complaint', sourceId: SOURCE }, at));
      const { data: added } = await t.resend.suppressions.batch.add({ emails: Array.from({ length: 25 }, (_, i) => `page${i}@example.com`) });
      const ids = added!.data.map((entry) => entry.id);

      const { data: first } = await t.resend.suppressions.list({ origin: 'manual' });
      assert.equal(first!.object, 'list');
      assert.equal(first!.data.length, 20);
      assert.equal(first!.has_more, true);
      assert.deepEqual(first!.data.slice(0, 3).map((e) => e.id), ids.slice(-3).reverse(), 'newest first');
      assert.ok(first!.data.every((e) => e.origin === 'manual'));

      const { data: page } = await t.resend.suppressions.list({ origin: 'manual', limit: 5, after: ids[20]! });
      assert.deepEqual(page!.data.map((e) => e.id), ids.slice(15, 20).reverse());
      const { data: newer } = await t.resend.suppressions.list({ origin: 'manual', limit: 2, before: ids[20]! });
      assert.deepEqual(newer!.data.map((e) => e.id), ids.slice(21, 23).reverse());

      const { data: complaints } = await t.resend.suppressions.list({ origin: 'complaint' });
      assert.deepEqual(complaints!.data.map((e) => [e.email, e.origin, e.source_id]), [['spam-report@example.com', 'complaint', SOURCE]]);
      const { data: bounces } = await t.resend.suppressions.list({ origin: 'bounce' });
      assert.deepEqual(bounces!.data.map((e) => e.email), ['gone@example.com']);
      const all = await t.resend.suppressions.list({ limit: 100 });
      assert.ok(all.data!.data.some((e) => e.origin === 'complaint') && all.data!.data.some((e) => e.origin === 'manual'));
    });

    it('adds and removes in batches (by emails or by ids), each answered in order', async () => {
      const existing = (await t.resend.suppressions.add({ email: 'kept@example.com' })).data!.id;
      const response = await requestJson(t, 'POST', '/suppressions/batch/add', { emails: ['one@example.com', 'Kept@example.com', 'two@example.com'] });
      assert.equal(response.status, 201);
      const [one, kept, two] = response.body.data.map((entry: { id: string }) => entry.id);
      assert.deepEqual(response.body.data, [one, existing, two].map((id) => ({ object: 'suppression', id })));
      assert.equal(kept, existing);

      const byEmail = await requestJson(t, 'POST', '/suppressions/batch/remove', { emails: ['ONE@example.com', 'never@example.com'] });
      assert.equal(byEmail.status, 200);
      assert.deepEqual(byEmail.body, {
        data: [
          { object: 'suppression', id: one, deleted: true },
          { object: 'suppression', id: 'never@example.com', deleted: false },
        ],
      });
      const unknown = '0192e3a4-3333-7000-8000-000000000000';
      const { data: byId } = await t.resend.suppressions.batch.remove({ ids: [two, existing.toUpperCase(), unknown] });
      assert.deepEqual(byId, {
        data: [
          { object: 'suppression', id: two, deleted: true },
          { object: 'suppression', id: existing, deleted: true },
          { object: 'suppression', id: unknown, deleted: false },
        ],
      });
      for (const email of ['one@example.com', 'two@example.com', 'kept@example.com']) {
        assert.equal((await t.resend.suppressions.get(email)).error?.statusCode, 404, email);
      }
    });

    it('refuses bad input in Resend’s shape, and stores nothing of a batch with a bad address', async () => {
      const cases: [string, string, unknown, string, RegExp][] = [
        ['POST', '/suppressions', {}, 'missing_required_field', /^Missing `email` field\.$/],
        ['POST', '/suppressions', { email: 'not an address' }, 'validation_error', /`email`.*not a valid email address/],
        ['POST', '/suppressions', { email: 42 }, 'validation_error', /`email`/],
        ['POST', '/suppressions/batch/add', { emails: [] }, 'validation_error', /`emails`/],
        ['POST', '/suppressions/batch/add', { emails: ['ok@example.com', 'bad'] }, 'validation_error', /`emails\[1\]`/],
        ['POST', '/suppressions/batch/add', { emails: Array.from({ length: 101 }, (_, i) => `a${i}@example.com`) }, 'validation_error', /`emails`.*at most 100/],
        ['POST', '/suppressions/batch/remove', {}, 'validation_error', /either `emails` or `ids`/],
        ['POST', '/suppressions/batch/remove', { emails: ['a@example.com'], ids: [SOURCE] }, 'validation_error', /either `emails` or `ids`/],
        ['POST', '/suppressions/batch/remove', { ids: [] }, 'validation_error', /`ids`/],
        ['GET', '/suppressions?origin=spam', undefined, 'validation_error', /`origin`.*"bounce", "complaint", "manual"/],
        ['GET', '/suppressions?limit=101', undefined, 'validation_error', /pagination limit/],
      ];
      for (const [method, path, body, name, message] of cases) {
        const response = await requestJson(t, method, path, body);
        assert.equal(response.status, 422, `${method} ${path} ${JSON.stringify(body)}: ${JSON.stringify(response.body)}`);
        assert.deepEqual(Object.keys(response.body).sort(), ['message', 'name', 'statusCode']);
        assert.equal(response.body.name, name);
        assert.match(response.body.message, message);
      }
      assert.equal((await t.resend.suppressions.get('ok@example.com')).error?.statusCode, 404, 'the batch was refused whole');
      assert.equal((await t.resend.suppressions.get('not-an-address@')).error?.statusCode, 404);
    });
  });
}
