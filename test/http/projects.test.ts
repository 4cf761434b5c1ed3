// Projects (docs/projects.md): the admin key manages them, and two projects see nothing of each other:
// what one owns is not listed, read (404, as a missing id), changed or counted through the other's key.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { cookiesOf, signIn } from '../support/dashboard-forms.ts';
import { dialects, eventually, rowCount, type TestApp } from '../support/harness.ts';
import { ADMIN_KEY, MISSING_ID, startTwoProjects, type TwoProjects } from '../support/projects.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';
import { startWebhookReceiver } from '../support/webhook-receiver.ts';

for (const dialect of dialects) {
  describe(`projects (${dialect})`, () => {
    let t: TestApp;
    /** Project A is the install's default project (the harness's key); B is made by the admin. */
    let a: Resend;
    let b: Resend;
    let bId: string;
    let bKeyId: string;
    let admin: TwoProjects['admin'];

    before(async () => {
      ({ t, a, b, bId, bKeyId, admin } = await startTwoProjects(
        dialect,
        { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } },
        { daily_quota: 1000, smtp_url: 'smtps://user:secret@smtp.example.com:465' },
      ));
    });
    after(() => t.close());

    it('lists, reads and changes projects for the admin key, never showing a relay URL', async () => {
      const list = await admin('GET', '/projects');
      assert.equal(list.status, 200);
      assert.deepEqual(list.body.data.map((project: any) => project.name).sort(), ['Client B', 'default']);
      const one = await admin('GET', `/projects/${bId}`);
      assert.equal(one.body.daily_quota, 1000);
      assert.equal(one.body.has_smtp_url, true);
      assert.ok(!JSON.stringify(list.body).includes('secret') && !('smtp_url' in one.body));
      const stored = await t.ctx.db.selectFrom('projects').select('smtp_url').where('id', '=', bId).executeTakeFirstOrThrow();
      assert.ok(stored.smtp_url && !stored.smtp_url.includes('secret'), 'the relay URL is sealed at rest');
      assert.equal((await admin('PATCH', `/projects/${bId}`, { name: 'Client B2', monthly_quota: 20000, smtp_url: null })).status, 200);
      const changed = await admin('GET', `/projects/${bId}`);
      assert.deepEqual([changed.body.name, changed.body.monthly_quota, changed.body.has_smtp_url], ['Client B2', 20000, false]);
      assert.equal((await admin('GET', `/projects/${MISSING_ID}`)).status, 404);
      const bad = await admin('POST', '/projects', { name: 'x', smtp_url: 'http://example.com' });
      assert.deepEqual([bad.status, bad.body.name], [422, 'validation_error']);
      assert.match(bad.body.message, /smtp_url/);
    });

    it('refuses the admin key every project route, and a project key the projects', async () => {
      const adminAsProject = new Resend(ADMIN_KEY, { baseUrl: t.url });
      const emails = await adminAsProject.emails.list();
      assert.deepEqual([emails.error?.statusCode, emails.error?.name], [401, 'restricted_api_key']);
      for (const key of [t.token, (await b.apiKeys.create({ name: 'second' })).data!.token]) {
        const response = await fetch(`${t.url}/projects`, { headers: { authorization: `Bearer ${key}` } });
        const body = (await response.json()) as any;
        assert.deepEqual([response.status, body.name], [401, 'restricted_api_key']);
      }
    });

    it('keeps API keys apart: not listed, renamed or deleted through the other project', async () => {
      const aKeys = (await a.apiKeys.list()).data!.data.map((key) => key.id);
      const bKeys = (await b.apiKeys.list()).data!.data.map((key) => key.id);
      assert.ok(bKeys.includes(bKeyId) && !aKeys.includes(bKeyId));
      assert.ok(aKeys.length > 0 && aKeys.every((id) => !bKeys.includes(id)));
      const missing = await b.apiKeys.remove(MISSING_ID);
      const foreign = await b.apiKeys.remove(aKeys[0]!);
      assert.deepEqual([foreign.error?.statusCode, foreign.error?.name, foreign.error?.message], [missing.error?.statusCode, missing.error?.name, missing.error?.message]);
      assert.equal(foreign.error?.statusCode, 404);
      const renamed = await t.fetch(`/api-keys/${bKeyId}`, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: '{"name":"taken"}' });
      assert.equal(renamed.status, 404);
      assert.ok((await a.apiKeys.list()).data!.data.some((key) => key.id === aKeys[0]), 'A’s key is still there');
    });

    it('keeps domains apart: not listed, read, changed, verified, deleted, nor bound to a key of the other', async () => {
      const domain = (await a.domains.create({ name: 'a-project.example' })).data!;
      assert.ok(domain.id);
      assert.deepEqual((await b.domains.list()).data!.data, []);
      const missing = await b.domains.get(MISSING_ID);
      const foreign = await b.domains.get(domain.id);
      assert.deepEqual(foreign.error, missing.error);
      assert.equal(foreign.error?.statusCode, 404);
      assert.equal((await b.domains.update({ id: domain.id, openTracking: true })).error?.statusCode, 404);
      assert.equal((await b.domains.verify(domain.id)).error?.statusCode, 404);
      assert.equal((await b.domains.remove(domain.id)).error?.statusCode, 404);
      const deliverability = await fetch(`${t.url}/domains/${domain.id}/deliverability`, { headers: { authorization: `Bearer ${(b as any).key}` } });
      assert.equal(deliverability.status, 404);
      const bound = await b.apiKeys.create({ name: 'bound', permission: 'sending_access', domain_id: domain.id });
      assert.deepEqual([bound.error?.statusCode, bound.error?.name], [422, 'validation_error']);
      // A name is one project's at most: mail received for it must land in one place.
      const again = await b.domains.create({ name: 'a-project.example' });
      assert.equal(again.error?.statusCode, 403);
      const still = (await a.domains.get(domain.id)).data!;
      assert.equal(still.open_tracking, false);
    });

    it('keeps emails apart: sent, batched, listed, read, changed, cancelled, raw, attachments and shares', async () => {
      const sent = (await a.emails.send({ from: 'hello@example.com', to: 'x@example.org', subject: 'A only', html: '<p>a</p>', attachments: [{ filename: 'a.txt', content: Buffer.from('a') }] })).data!;
      const scheduled = (await a.emails.send({ from: 'hello@example.com', to: 'y@example.org', subject: 'A later', text: 'later', scheduledAt: 'in 1 hour' })).data!;
      const batch = (await b.batch.send([{ from: 'hello@example.com', to: 'z@example.org', subject: 'B only', text: 'b' }])).data!;
      const bIds = batch.data.map((email) => email.id);
      const aList = (await a.emails.list()).data!.data.map((email) => email.id);
      const bList = (await b.emails.list()).data!.data.map((email) => email.id);
      assert.ok(aList.includes(sent.id) && aList.includes(scheduled.id) && !aList.includes(bIds[0]!));
      assert.deepEqual(bList, bIds);
      const missing = await b.emails.get(MISSING_ID);
      const foreign = await b.emails.get(sent.id);
      assert.deepEqual(foreign.error, missing.error);
      assert.equal(foreign.error?.statusCode, 404);
      assert.equal((await b.emails.update({ id: scheduled.id, scheduledAt: 'in 2 hours' })).error?.statusCode, 404);
      assert.equal((await b.emails.cancel(scheduled.id)).error?.statusCode, 404);
      const bToken = (b as any).key as string;
      for (const [method, path] of [['GET', `/emails/${sent.id}/raw`], ['GET', `/emails/${sent.id}/events`], ['GET', `/emails/${sent.id}/attachments`], ['POST', `/emails/${sent.id}/share`]] as const) {
        const response = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${bToken}`, 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
        assert.equal(response.status, 404, `${method} ${path}`);
      }
      assert.equal((await a.emails.get(scheduled.id)).data?.last_event, 'scheduled', 'A’s email is unchanged');
      assert.equal((await a.emails.get(bIds[0]!)).error?.statusCode, 404);
      assert.equal((await a.emails.cancel(scheduled.id)).error, null);
    });

    it('refuses a sender domain of another project', async () => {
      await a.domains.create({ name: 'a-sender.example' });
      const refused = await b.emails.send({ from: 'news@a-sender.example', to: 'x@example.org', subject: 'not mine', text: 'x' });
      assert.deepEqual([refused.error?.statusCode, refused.error?.name], [403, 'validation_error']);
      assert.match(refused.error!.message, /not one of this project's domains/);
      assert.ok((await a.emails.send({ from: 'news@a-sender.example', to: 'x@example.org', subject: 'mine', text: 'x' })).data?.id);
    });

    it('writes an email submitted over SMTP in the project of the key that signed in', async () => {
      const submission = await startSubmission(t);
      try {
        const client = submissionClient(submission.port, (b as any).key as string);
        const sent = await client.sendMail({ from: 'hello@example.com', to: 'x@example.org', subject: 'over SMTP, B', text: 'b' });
        const id = idOf(sent.response)!;
        assert.equal((await b.emails.get(id)).data?.subject, 'over SMTP, B');
        assert.equal((await a.emails.get(id)).error?.statusCode, 404);
        assert.ok(!(await a.emails.list()).data!.data.some((email) => email.id === id));
        await assert.rejects(client.sendMail({ from: 'news@a-sender.example', to: 'x@example.org', subject: 'not mine', text: 'x' }), /550.*not one of this project's domains/);
        client.close();
      } finally {
        await submission.close();
      }
    });

    it('keeps webhooks apart: each project’s endpoints hear of its own events only, and see nothing of the other’s', async () => {
      const [receiverA, receiverB] = [await startWebhookReceiver(), await startWebhookReceiver()];
      try {
        const events = ['email.sent', 'email.delivered', 'domain.created'] as never;
        const hookA = (await a.webhooks.create({ endpoint: receiverA.url, events })).data!;
        const hookB = (await b.webhooks.create({ endpoint: receiverB.url, events })).data!;
        assert.deepEqual((await b.webhooks.list()).data!.data.map((hook) => hook.id), [hookB.id]);
        const missing = await b.webhooks.get(MISSING_ID);
        const foreign = await b.webhooks.get(hookA.id);
        assert.deepEqual(foreign.error, missing.error);
        assert.equal(foreign.error?.statusCode, 404);
        assert.equal((await b.webhooks.update(hookA.id, { status: 'disabled' })).error?.statusCode, 404);
        assert.equal((await a.webhooks.get(hookA.id)).data?.status, 'enabled');
        assert.equal((await b.webhooks.remove(hookA.id)).error?.statusCode, 404);
        const bToken = (b as any).key as string;
        for (const [method, path] of [['POST', `/webhooks/${hookA.id}/signing-secret/rotate`], ['GET', `/webhooks/${hookA.id}/events`]] as const) {
          const response = await fetch(`${t.url}${path}`, { method, headers: { authorization: `Bearer ${bToken}`, 'content-type': 'application/json' }, body: method === 'POST' ? '{}' : undefined });
          assert.equal(response.status, 404, `${method} ${path}`);
        }

        const fromB = (await b.emails.send({ from: 'hello@example.com', to: 'x@example.org', subject: 'B', text: 'b' })).data!;
        const fromA = (await a.emails.send({ from: 'hello@example.com', to: 'x@example.org', subject: 'A', text: 'a' })).data!;
        await b.domains.create({ name: 'b-hooks.example' });
        const heard = (receiver: typeof receiverA, id: string) => receiver.received.some((hook) => hook.payload.data.email_id === id);
        await eventually(() => heard(receiverA, fromA.id) && heard(receiverB, fromB.id));
        await eventually(() => receiverB.received.some((hook) => hook.payload.data.name === 'b-hooks.example'));
        // Each event's outbox messages are written with it, in one transaction: none goes to the other project's endpoint.
        const messages = await t.ctx.db
          .selectFrom('webhook_messages')
          .innerJoin('events', 'events.id', 'webhook_messages.event_id')
          .select(['webhook_messages.webhook_id', 'events.project_id'])
          .execute();
        assert.ok(messages.length >= 4);
        for (const message of messages) assert.equal(message.webhook_id, message.project_id === bId ? hookB.id : hookA.id);
        assert.ok(!heard(receiverA, fromB.id) && !heard(receiverB, fromA.id));
        assert.ok(!receiverA.received.some((hook) => hook.payload.data.name === 'b-hooks.example'));
      } finally {
        await receiverA.close();
        await receiverB.close();
      }
    });

    it('keeps contacts, segments, topics and properties apart: not listed, read, changed or deleted through the other', async () => {
      const segment = (await a.segments.create({ name: 'A segment' })).data!;
      const topic = (await a.topics.create({ name: 'A topic', defaultSubscription: 'opt_in' })).data!;
      const property = (await a.contactProperties.create({ key: 'a_plan', type: 'string' })).data!;
      const contact = (await a.contacts.create({ email: 'ann@a-project.example', firstName: 'Ann', segments: [{ id: segment.id }], properties: { a_plan: 'pro' } })).data!;
      assert.ok(segment.id && topic.id && property.id && contact.id);
      assert.deepEqual((await b.contacts.list()).data!.data, []);
      assert.deepEqual((await b.segments.list()).data!.data, []);
      assert.deepEqual((await b.topics.list()).data!.data, []);
      assert.deepEqual((await b.contactProperties.list()).data!.data, []);
      const metrics = await fetch(`${t.url}/segments/metrics`, { headers: { authorization: `Bearer ${(b as any).key}` } });
      const counted = (await metrics.json()) as any;
      assert.deepEqual([metrics.status, counted.data, counted.totals.all_contacts], [200, [], 0], 'B counts none of A’s segments or contacts');
      const missing = await b.contacts.get(MISSING_ID);
      for (const foreign of [await b.contacts.get(contact.id), await b.contacts.get('ann@a-project.example')]) {
        assert.deepEqual(foreign.error, missing.error);
        assert.equal(foreign.error?.statusCode, 404);
      }
      const missingSegment = await b.segments.get(MISSING_ID);
      assert.deepEqual((await b.segments.get(segment.id)).error, missingSegment.error);
      assert.equal(missingSegment.error?.statusCode, 404);
      assert.deepEqual((await b.topics.get(topic.id)).error, (await b.topics.get(MISSING_ID)).error);
      assert.equal((await b.topics.get(topic.id)).error?.statusCode, 404);
      assert.equal((await b.contactProperties.get(property.id)).error?.statusCode, 404);
      assert.equal((await b.contacts.update({ id: contact.id, firstName: 'Mallory' })).error?.statusCode, 404);
      assert.equal((await b.topics.update({ id: topic.id, name: 'Taken' })).error?.statusCode, 404);
      assert.equal((await b.contactProperties.update({ id: property.id, fallbackValue: 'x' })).error?.statusCode, 404);
      assert.equal((await b.contacts.segments.list({ contactId: contact.id })).error?.statusCode, 404);
      assert.equal((await b.contacts.topics.list({ id: contact.id })).error?.statusCode, 404);
      assert.equal((await b.contacts.list({ segmentId: segment.id })).error?.statusCode, 404);
      // B's own contact cannot join A's segment or topic: they are missing ids to B.
      const bContact = (await b.contacts.create({ email: 'bob@b-project.example' })).data!;
      assert.equal((await b.contacts.segments.add({ contactId: bContact.id, segmentId: segment.id })).error?.statusCode, 404);
      assert.deepEqual((await b.contacts.topics.list({ id: bContact.id })).data!.data, [], 'A’s topic is not offered to B’s contact');
      const joined = await b.contacts.create({ email: 'bea@b-project.example', segments: [{ id: segment.id }], topics: [{ id: topic.id, subscription: 'opt_out' }] });
      assert.equal(joined.error?.statusCode, 422);
      // Deleting is idempotent, as Resend's: another project's contact or segment answers as a missing one, and stays.
      const deletedMissing = await b.contacts.remove(MISSING_ID);
      const deletedForeign = await b.contacts.remove(contact.id);
      assert.deepEqual(Object.keys(deletedForeign.data!).sort(), Object.keys(deletedMissing.data!).sort());
      assert.ok(!('id' in deletedForeign.data!), 'no id: nothing was deleted');
      await b.segments.remove(segment.id);
      assert.equal((await b.topics.remove(topic.id)).error?.statusCode, 404);
      assert.equal((await b.contactProperties.remove(property.id)).error?.statusCode, 404);
      const still = (await a.contacts.get(contact.id)).data!;
      assert.equal(still.first_name, 'Ann');
      assert.deepEqual(still.properties, { a_plan: { value: 'pro', type: 'string' } });
      assert.equal((await a.segments.get(segment.id)).data?.name, 'A segment');
      assert.equal((await a.topics.get(topic.id)).data?.name, 'A topic');
      assert.equal((await a.contactProperties.get(property.id)).data?.key, 'a_plan');
      assert.deepEqual((await a.contacts.list()).data!.data.map((c) => c.id), [contact.id]);
      assert.equal((await a.contacts.get(bContact.id)).error?.statusCode, 404);
      // An address is unique within a project: B has its own contact of A's address (test/projects/uniqueness.test.ts).
      const own = (await b.contacts.create({ email: 'ann@a-project.example' })).data!;
      assert.notEqual(own.id, contact.id);
    });

    it('keeps templates apart: not listed, read, changed, published, copied, deleted nor sent with through the other', async () => {
      const template = (await a.templates.create({ name: 'A receipt', html: '<p>Paid</p>', subject: 'Receipt', alias: 'a-receipt' })).data!;
      assert.ok((await a.templates.publish(template.id)).data?.id);
      assert.deepEqual((await b.templates.list()).data!.data, []);
      const missing = await b.templates.get(MISSING_ID);
      assert.equal(missing.error?.statusCode, 404);
      for (const foreign of [await b.templates.get(template.id), await b.templates.get('a-receipt')]) assert.deepEqual(foreign.error, missing.error);
      assert.equal((await b.templates.update(template.id, { name: 'Mallory' })).error?.statusCode, 404);
      assert.equal((await b.templates.publish(template.id)).error?.statusCode, 404);
      assert.equal((await b.templates.duplicate(template.id)).error?.statusCode, 404);
      assert.equal((await b.templates.remove(template.id)).error?.statusCode, 404);
      // Sending through B's key names A's template as it would a missing one.
      const send = (id: string) => b.emails.send({ from: 'hello@example.com', to: 'x@example.org', template: { id } });
      const unknown = await send('no-such-template');
      assert.deepEqual([unknown.error?.statusCode, unknown.error?.name], [422, 'validation_error']);
      for (const id of [template.id, 'a-receipt']) {
        const refused = await send(id);
        assert.deepEqual([refused.error?.statusCode, refused.error?.name], [422, 'validation_error']);
        assert.match(refused.error!.message, /not found/);
      }
      const still = (await a.templates.get(template.id)).data!;
      assert.deepEqual([still.name, still.status], ['A receipt', 'published']);
      assert.deepEqual((await a.templates.list()).data!.data.map((x) => x.id), [template.id]);
      // An alias is unique within a project: B names its own template with A's alias (test/projects/uniqueness.test.ts).
      const own = (await b.templates.create({ name: 'B receipt', html: '<p>x</p>' })).data!;
      assert.ok((await b.templates.update(own.id, { alias: 'a-receipt' })).data?.id);
      assert.equal((await b.templates.get('a-receipt')).data?.id, own.id);
      assert.equal((await a.templates.get('a-receipt')).data?.id, template.id);
      assert.equal((await a.templates.get(own.id)).error?.statusCode, 404);
    });

    it('shows a dashboard session its key’s project only', async () => {
      const session = cookiesOf(await signIn(t, (b as any).key as string));
      const page = async (path: string) => {
        const response = await fetch(`${t.url}/dashboard${path}`, { headers: { cookie: session } });
        return { status: response.status, text: await response.text() };
      };
      const domains = await page('/domains');
      assert.match(domains.text, /b-hooks\.example/);
      assert.doesNotMatch(domains.text, /a-project\.example|a-sender\.example/);
      const emails = await page('/emails');
      assert.match(emails.text, /B only/);
      assert.doesNotMatch(emails.text, /A only|A later/);
      const aEmail = (await a.emails.list()).data!.data[0]!;
      assert.equal((await page(`/emails/${aEmail.id}`)).status, 404);
      const aDomain = (await a.domains.list()).data!.data[0]!;
      assert.equal((await page(`/domains/${aDomain.id}`)).status, 404);
      const aHook = (await a.webhooks.list()).data!.data[0]!;
      assert.equal((await page(`/webhooks/${aHook.id}`)).status, 404);
      const templates = await page('/templates');
      assert.match(templates.text, /B receipt/);
      assert.doesNotMatch(templates.text, /A receipt/);
      const aTemplate = (await a.templates.list()).data!.data[0]!;
      assert.equal((await page(`/templates/${aTemplate.id}`)).status, 404);
      assert.equal((await page(`/templates/${aTemplate.id}/preview`)).status, 404);
      const keys = (await page('/api-keys')).text;
      assert.ok(keys.includes(`/dashboard/api-keys/${bKeyId}/delete`));
      for (const key of (await a.apiKeys.list()).data!.data) assert.ok(!keys.includes(key.id), `A's key ${key.name} is listed`);
    });

    it('refuses to delete a project with keys or domains, and with force removes it all in the background', async () => {
      const refused = await admin('DELETE', `/projects/${bId}`);
      assert.deepEqual([refused.status, refused.body.name], [409, 'project_not_empty']);
      assert.match(refused.body.message, /1 domains and 2 API keys.*force=true/);
      assert.equal((await b.domains.list()).data!.data.length, 1, 'nothing removed');
      const before = await rowCount(t, 'domains');
      const forced = await admin('DELETE', `/projects/${bId}?force=true`);
      assert.deepEqual(forced.body, { object: 'project', id: bId, deleted: true });
      assert.equal((await b.domains.list()).error?.statusCode, 403, 'its keys stop at once');
      await eventually(async () => (await rowCount(t, 'domains')) === before - 1);
      assert.equal((await a.domains.list()).data!.data.length, 2, 'A keeps its domains');
      assert.equal((await admin('GET', `/projects/${bId}`)).status, 404);
      assert.equal((await admin('DELETE', `/projects/${bId}`)).status, 404);
    });
  });
}
