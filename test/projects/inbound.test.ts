import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually } from '../support/harness.ts';
import { cookiesOf, csrfField, postForm, signIn } from '../support/dashboard-forms.ts';
import { INBOUND_ENV, sendTo, startInbound } from '../support/inbound.ts';
import { MISSING_ID, startTwoProjects, type TwoProjects } from '../support/projects.ts';
import { dsn } from '../support/reports.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// Received mail, bounce reports and suppressions in two projects (docs/projects.md): mail for a domain
// is its project's; a report about an email lands on that email, in its project, and so does the
// suppression it causes; the recipient policy reads the sending email's project's list only.

const idOf = (response: string) => /^250 2\.0\.0 OK ([0-9a-f-]{36})$/.exec(response)?.[1];
const base = { from: 'Acme <news@example.com>', subject: 'Hello', text: 'Hi' };

/** An SDK answer's error, as a foreign id must answer it: exactly as a missing one. */
const errorOf = (answer: { error: unknown }) => answer.error;

for (const dialect of dialects) {
  describe(`projects: received mail, bounces and suppressions (${dialect})`, () => {
    let two: TwoProjects;
    let relay: TestSmtpServer;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let hooksA: WebhookReceiver;
    let hooksB: WebhookReceiver;

    const mail = async (to: string[], subject: string) =>
      (await sendTo(inbound.port, { envelope: { from: 'ada@sender.test', to }, from: 'ada@sender.test', to, subject, text: 'hello', attachments: [{ filename: 'a.txt', content: 'attached' }] })).response;

    /** Sends through the relay and waits for its delivery; the VERP address the copy went out with. */
    async function delivered(client: TwoProjects['a'], to: string): Promise<{ id: string; verp: string }> {
      const { data, error } = await client.emails.send({ ...base, to });
      assert.equal(error, null);
      await eventually(async () => (await client.emails.get(data.id)).data?.last_event === 'delivered' || undefined);
      const copy = relay.messages.find((m) => m.parsed.messageId === `<${data.id}@example.com>`)!;
      return { id: data.id, verp: copy.from };
    }

    before(async () => {
      relay = await startSmtpServer();
      hooksA = await startWebhookReceiver();
      hooksB = await startWebhookReceiver();
      two = await startTwoProjects(dialect, {
        env: { ...INBOUND_ENV, SMTP_URL: relay.url, RELAY_ENVELOPE_SENDER: 'verp', MAILROOM_HOSTNAME: 'mail.mailroom.test', MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
      });
      inbound = await startInbound(two.t);
      const events = ['email.received', 'email.bounced', 'suppression.added', 'suppression.removed'] as never;
      for (const [client, name, hooks] of [[two.a, 'a-inbox.test', hooksA], [two.b, 'b-inbox.test', hooksB]] as const) {
        const { error } = await client.domains.create({ name, capabilities: { receiving: 'enabled' } } as never);
        assert.equal(error, null);
        await client.webhooks.create({ endpoint: hooks.url, events });
      }
    });
    after(async () => {
      await inbound.close();
      await two.t.close();
      await hooksA.close();
      await hooksB.close();
      await relay.close();
    });

    it("lists and reads mail received for A's domain in A only: B gets each of its ids as a missing one", async () => {
      const { a, b, t } = two;
      const id = idOf(await mail(['support@a-inbox.test'], 'For A'))!;
      assert.ok(id);
      const own = await a.emails.receiving.get(id);
      assert.equal(own.error, null);
      assert.deepEqual(own.data.received_for, ['support@a-inbox.test']);
      assert.ok((await a.emails.receiving.list()).data!.data.some((e) => e.id === id));
      assert.ok(!(await b.emails.receiving.list()).data!.data.some((e) => e.id === id), "A's mail is not listed in B");

      assert.deepEqual(errorOf(await b.emails.receiving.get(id)), errorOf(await b.emails.receiving.get(MISSING_ID)));
      assert.equal((await b.emails.receiving.get(id)).error?.statusCode, 404);
      const attachments = async (key: string, emailId: string) => {
        const response = await fetch(`${t.url}/emails/receiving/${emailId}/attachments`, { headers: { authorization: `Bearer ${key}` } });
        return { status: response.status, body: (await response.json()) as any };
      };
      const listed = await attachments(t.token, id);
      assert.equal(listed.status, 200);
      const attachmentId: string = listed.body.data[0].id;
      assert.deepEqual(await attachments(two.bToken, id), await attachments(two.bToken, MISSING_ID));
      assert.equal((await attachments(two.bToken, id)).status, 404);
      const attachment = async (key: string, emailId: string) =>
        (await fetch(`${t.url}/emails/receiving/${emailId}/attachments/${attachmentId}`, { headers: { authorization: `Bearer ${key}` } })).status;
      assert.deepEqual([await attachment(t.token, id), await attachment(two.bToken, id)], [200, 404]);
      assert.equal((await b.emails.receiving.get(id)).error?.message, (await b.emails.receiving.get(MISSING_ID)).error?.message);

      const hook = await eventually(() => hooksA.received.find((h) => h.payload.type === 'email.received' && h.payload.data.email_id === id));
      assert.equal(hook.payload.data.subject, 'For A');
      assert.ok(!hooksB.received.some((h) => h.payload.data.email_id === id), "B's endpoint hears nothing of A's mail");

      const session = cookiesOf(await signIn(t, two.bToken));
      const page = async (path: string) => {
        const response = await fetch(`${t.url}/dashboard${path}`, { headers: { cookie: session } });
        return { status: response.status, text: await response.text() };
      };
      assert.doesNotMatch((await page('/received')).text, /For A/);
      for (const path of [`/received/${id}`, `/received/${id}/html`, `/received/${id}/raw`]) assert.equal((await page(path)).status, 404, path);
      const share = await fetch(`${t.url}/emails/${id}/share`, { method: 'POST', headers: { authorization: `Bearer ${two.bToken}`, 'content-type': 'application/json' }, body: '{}' });
      assert.equal(share.status, 404, "B cannot share A's received mail");
    });

    it("splits a message for both projects' domains: each keeps its own recipients, under an id of its own", async () => {
      const { a, b } = two;
      const id = idOf(await mail(['one@a-inbox.test', 'two@b-inbox.test', 'three@a-inbox.test'], 'For both'))!;
      const inA = (await a.emails.receiving.get(id)).data!;
      assert.deepEqual(inA.received_for, ['one@a-inbox.test', 'three@a-inbox.test']);
      const inB = (await b.emails.receiving.list()).data!.data.find((e) => e.subject === 'For both')!;
      assert.notEqual(inB.id, id);
      assert.deepEqual(inB.received_for, ['two@b-inbox.test']);
      assert.equal((await b.emails.receiving.get(inB.id)).data?.attachments.length, 1);
      assert.equal((await a.emails.receiving.get(inB.id)).error?.statusCode, 404);
      await eventually(() => hooksB.received.find((h) => h.payload.type === 'email.received' && h.payload.data.email_id === inB.id));
      assert.ok(!hooksA.received.some((h) => h.payload.data.email_id === inB.id));
    });

    it("suppresses a bounced address in the bounced email's project only: A still sends to it", async () => {
      const { a, b } = two;
      const { id, verp } = await delivered(b, 'gone@example.org');
      const report = await dsn(verp, `<${id}@example.com>`, [{ recipient: 'gone@example.org', action: 'failed', status: '5.1.1' }]);
      assert.match((await sendTo(inbound.port, { envelope: { from: 'mailer-daemon@relay.test', to: verp }, raw: report })).response, /^250/);
      await eventually(async () => (await b.emails.get(id)).data?.last_event === 'bounced' || undefined);

      const entry = (await b.suppressions.get('gone@example.org')).data;
      assert.deepEqual([entry?.origin, entry?.source_id], ['bounce', id]);
      assert.equal((await a.suppressions.get('gone@example.org')).error?.statusCode, 404);
      const added = await eventually(() => hooksB.received.find((h) => h.payload.type === 'suppression.added' && h.payload.data.email === 'gone@example.org'));
      assert.equal(added.payload.data.source_id, id);
      assert.ok(!hooksA.received.some((h) => h.payload.type === 'suppression.added' && h.payload.data.email === 'gone@example.org'));

      const fromA = await delivered(a, 'gone@example.org');
      assert.ok(fromA.verp, "A's email to the address B suppressed reaches the relay");
      const { data: again } = await b.emails.send({ ...base, to: 'gone@example.org' });
      await eventually(async () => (await b.emails.get(again!.id)).data?.last_event === 'suppressed' || undefined);
    });

    it("keeps A's entry and B's of the same address apart, made by hand or by a bounce", async () => {
      const { a, b } = two;
      const mine = (await a.suppressions.add({ email: 'shared@example.org' })).data!.id;
      const byHand = await b.suppressions.add({ email: 'shared@example.org' });
      assert.equal(byHand.error, null, JSON.stringify(byHand.error));
      assert.notEqual(byHand.data.id, mine);
      await b.suppressions.remove(byHand.data.id);
      const { id, verp } = await delivered(b, 'shared@example.org');
      const report = await dsn(verp, `<${id}@example.com>`, [{ recipient: 'shared@example.org', action: 'failed', status: '5.1.1' }]);
      assert.match((await sendTo(inbound.port, { envelope: { from: 'mailer-daemon@relay.test', to: verp }, raw: report })).response, /^250/);
      await eventually(async () => (await b.emails.get(id)).data?.last_event === 'bounced' || undefined);
      const theirs = (await b.suppressions.get('shared@example.org')).data;
      assert.deepEqual([theirs?.origin, theirs?.source_id], ['bounce', id], "the bounce suppresses in B");
      const entry = (await a.suppressions.get('shared@example.org')).data;
      assert.deepEqual([entry?.id, entry?.origin, entry?.source_id], [mine, 'manual', null]);
    });

    it("records a report mailed to a receiving domain on the emails of that domain's project only", async () => {
      const { a, b } = two;
      const { id } = await delivered(b, 'maybe@example.org');
      const report = (to: string) => dsn(to, `<${id}@example.com>`, [{ recipient: 'maybe@example.org', action: 'failed', status: '5.1.1' }]);
      const toA = idOf((await sendTo(inbound.port, { envelope: { from: 'mailer-daemon@relay.test', to: 'postmaster@a-inbox.test' }, raw: await report('postmaster@a-inbox.test') })).response)!;
      assert.ok((await a.emails.receiving.get(toA)).data, "the report is kept as A's mail");
      assert.equal((await b.emails.get(id)).data?.last_event, 'delivered', "a report to A's domain does not touch B's email");
      await sendTo(inbound.port, { envelope: { from: 'mailer-daemon@relay.test', to: 'postmaster@b-inbox.test' }, raw: await report('postmaster@b-inbox.test') });
      await eventually(async () => (await b.emails.get(id)).data?.last_event === 'bounced' || undefined);
    });

    it('lists, reads and removes suppressions in their own project only', async () => {
      const { a, b, t } = two;
      const id = (await a.suppressions.add({ email: 'a-only@example.org' })).data!.id;
      assert.ok(!(await b.suppressions.list()).data!.data.some((s) => s.id === id), "A's entry is not listed in B");
      assert.ok((await a.suppressions.list()).data!.data.some((s) => s.id === id));
      assert.deepEqual(errorOf(await b.suppressions.get(id)), errorOf(await b.suppressions.get(MISSING_ID)));
      assert.equal((await b.suppressions.get('a-only@example.org')).error?.statusCode, 404);
      assert.deepEqual(errorOf(await b.suppressions.remove(id)), errorOf(await b.suppressions.remove(MISSING_ID)));
      assert.equal((await b.suppressions.remove('a-only@example.org')).error?.statusCode, 404);
      const batch = await fetch(`${t.url}/suppressions/batch/remove`, {
        method: 'POST',
        headers: { authorization: `Bearer ${two.bToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ ids: [id] }),
      });
      assert.deepEqual(((await batch.json()) as any).data, [{ object: 'suppression', id, deleted: false }]);
      const byEmail = await fetch(`${t.url}/suppressions/batch/remove`, {
        method: 'POST',
        headers: { authorization: `Bearer ${two.bToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ emails: ['a-only@example.org'] }),
      });
      assert.deepEqual(((await byEmail.json()) as any).data, [{ object: 'suppression', id: 'a-only@example.org', deleted: false }]);

      const session = cookiesOf(await signIn(t, two.bToken));
      const listPage = await fetch(`${t.url}/dashboard/suppressions`, { headers: { cookie: session } });
      const html = await listPage.text();
      assert.doesNotMatch(html, /a-only@example\.org/);
      const removed = await postForm(t, `/dashboard/suppressions/${id}/remove`, { _csrf: csrfField(html) }, session);
      assert.equal(removed.status, 404, "B's dashboard cannot remove A's entry");

      assert.equal((await a.suppressions.get(id)).data?.email, 'a-only@example.org', 'A keeps its entry');
      assert.equal((await a.suppressions.remove(id)).error, null);
      assert.ok(!hooksB.received.some((h) => h.payload.type.startsWith('suppression.') && h.payload.data.id === id));
      await eventually(() => hooksA.received.find((h) => h.payload.type === 'suppression.removed' && h.payload.data.id === id));
    });
  });
}
