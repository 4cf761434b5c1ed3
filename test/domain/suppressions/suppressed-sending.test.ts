import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { toTimestamp } from '../../../src/time/clock.ts';
import { suppress, type NewSuppression } from '../../../src/domain/suppressions/suppressions.ts';
import { DEFAULT_PROJECT_ID } from '../../../src/store/projects.ts';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const base = { from: 'Acme <news@example.com>', subject: 'Hello', text: 'Hi' };
const BOUNCE_MESSAGE = "The recipient's email address is on the suppression list because it has a recent history of producing hard bounces.";

interface EventRow {
  type: string;
  recipient: string | null;
  response: string | null;
}

for (const dialect of dialects) {
  describe(`sending respects the suppression list (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let receiver: WebhookReceiver;
    let t: TestApp;
    /** Every RCPT TO the SMTP server was asked for. */
    const asked: string[] = [];

    const events = async (id: string): Promise<EventRow[]> => ((await (await t.fetch(`/emails/${id}/events`)).json()) as { data: EventRow[] }).data;
    const lastEvent = (id: string, expected: string) =>
      eventually(async () => (await t.resend.emails.get(id)).data?.last_event === expected || undefined);
    const received = (id: string) => eventually(() => smtp.messages.find((m) => m.parsed.messageId === `<${id}@example.com>`));
    const hooks = (id: string, type: string) => receiver.received.filter((hook) => hook.payload.type === type && hook.payload.data.email_id === id);
    const statuses = async (id: string) =>
      Object.fromEntries(
        (await t.ctx.db.selectFrom('email_recipients').select(['address', 'status']).where('email_id', '=', id).execute()).map((r) => [r.address, r.status]),
      );
    /** An entry as a bounce or complaint handler makes it, through the exported function. */
    const suppressed = (entry: NewSuppression) => t.ctx.writer.transaction((tx) => suppress(t.ctx, tx, DEFAULT_PROJECT_ID, entry, toTimestamp(t.clock.now())));

    before(async () => {
      smtp = await startSmtpServer();
      smtp.onRecipient = (address) => {
        asked.push(address);
        return undefined;
      };
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.suppressed', 'email.delivered'] });
      await suppressed({ email: 'bounced.before@example.com', origin: 'bounce', sourceId: '0192e3a4-4444-7000-8000-000000000000' });
      await suppressed({ email: 'complained.before@example.com', origin: 'complaint', sourceId: null });
      await t.resend.suppressions.add({ email: 'Manual@Example.com' });
    });
    after(async () => {
      await t.close();
      await receiver.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
      asked.length = 0;
    });

    it('sends to the other recipients only, and records email.suppressed for the suppressed one', async () => {
      const { data, error } = await t.resend.emails.send({ ...base, to: ['jane@example.com', 'Bounced.Before@example.com'] });
      assert.equal(error, null);
      const id = data.id;
      assert.deepEqual((await received(id)).to, ['jane@example.com']);
      await lastEvent(id, 'delivered');
      assert.ok(!asked.some((address) => address.toLowerCase() === 'bounced.before@example.com'), 'never offered to the server');
      assert.deepEqual(await statuses(id), { 'jane@example.com': 'delivered', 'Bounced.Before@example.com': 'suppressed' });
      const refused = (await events(id)).filter((e) => e.type === 'suppressed');
      assert.deepEqual(refused, [{ ...refused[0]!, type: 'suppressed', recipient: 'Bounced.Before@example.com', response: BOUNCE_MESSAGE }]);

      await eventually(() => hooks(id, 'email.suppressed').length === 1 && hooks(id, 'email.delivered').length === 1);
      const { data: hook } = hooks(id, 'email.suppressed')[0]!.payload;
      assert.deepEqual(hook.suppressed, { type: 'OnAccountSuppressionList', reason: 'previous_bounce', message: BOUNCE_MESSAGE });
      assert.equal(hook.email_id, id);
      assert.deepEqual(hook.to, ['jane@example.com', 'Bounced.Before@example.com']);
    });

    it('suppresses an email whose every recipient is on the list: last_event suppressed, nothing sent', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: 'complained.before@example.com', cc: 'manual@example.com' });
      const id = data!.id;
      await lastEvent(id, 'suppressed');
      assert.deepEqual(await statuses(id), { 'complained.before@example.com': 'suppressed', 'manual@example.com': 'suppressed' });

      await eventually(() => hooks(id, 'email.suppressed').length === 1);
      assert.equal(hooks(id, 'email.suppressed')[0]!.payload.data.suppressed.reason, 'previous_complaint');
      const manual = (await t.resend.emails.send({ ...base, to: 'MANUAL@example.com' })).data!.id;
      await eventually(() => hooks(manual, 'email.suppressed').length === 1);
      const payload = hooks(manual, 'email.suppressed')[0]!.payload.data.suppressed;
      assert.deepEqual(Object.keys(payload).sort(), ['message', 'type'], 'a manual entry gives no reason');
      assert.match(payload.message, /suppression list/);

      const control = (await t.resend.emails.send({ ...base, to: 'control@example.com' })).data!.id;
      await received(control);
      assert.deepEqual(asked, ['control@example.com']);
    });

    it('applies the same rule to every batch entry and to template sends', async () => {
      await t.resend.templates.create({ name: 'welcome', alias: 'welcome', from: base.from, subject: 'Welcome', html: '<p>Welcome {{{NAME}}}</p>', variables: [{ key: 'NAME', type: 'string' }] }).publish();
      const { data, error } = await t.resend.batch.send([
        { ...base, to: ['bounced.before@example.com', 'ann@example.com'] },
        { ...base, to: 'manual@example.com' },
        { to: ['manual@example.com', 'bob@example.com'], template: { id: 'welcome', variables: { NAME: 'Bob' } } },
      ]);
      assert.equal(error, null);
      const [mixed, refused, templated] = data.data.map((entry) => entry.id);
      assert.deepEqual((await received(mixed!)).to, ['ann@example.com']);
      await lastEvent(refused!, 'suppressed');
      const welcome = await received(templated!);
      assert.deepEqual(welcome.to, ['bob@example.com']);
      assert.match(welcome.parsed.html as string, /Welcome Bob/);
      // The relay has the message before the worker commits the attempt's outcomes.
      await eventually(async () => (await statuses(templated!))['manual@example.com'] === 'suppressed' || undefined);

      const single = (await t.resend.emails.send({ to: 'Manual@example.com', template: { id: 'welcome', variables: { NAME: 'M' } } })).data!.id;
      await lastEvent(single, 'suppressed');
      await lastEvent(templated!, 'delivered');
      assert.ok(!asked.some((address) => address.toLowerCase().startsWith('manual') || address.startsWith('bounced')));
    });

    it('records a broadcast’s email to a suppressed contact as suppressed, and sends the others', async () => {
      const segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      for (const email of ['reader@example.com', 'manual@example.com']) await t.resend.contacts.create({ email, segments: [{ id: segment }] });
      const { data } = await t.resend.broadcasts.create({ from: base.from, subject: 'News', text: 'Hi', segmentId: segment, send: true });
      const emails = await eventually(async () => {
        const rows = await t.ctx.db.selectFrom('emails').select(['id', 'to', 'last_event']).where('broadcast_id', '=', data!.id).execute();
        return rows.length === 2 && rows.every((row) => ['delivered', 'suppressed'].includes(row.last_event)) ? rows : undefined;
      });
      const byRecipient = Object.fromEntries(emails.map((row) => [JSON.parse(row.to)[0], row]));
      assert.equal(byRecipient['reader@example.com']!.last_event, 'delivered');
      assert.equal(byRecipient['manual@example.com']!.last_event, 'suppressed');
      assert.deepEqual(asked, ['reader@example.com']);
      const id = byRecipient['manual@example.com']!.id;
      await eventually(() => hooks(id, 'email.suppressed').length === 1);
      assert.equal(hooks(id, 'email.suppressed')[0]!.payload.data.broadcast_id, data!.id);
    });

    it('checks when the email goes out: an address suppressed while its email waits is not sent to', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: ['later@example.com', 'stays@example.com'], scheduledAt: 'in 1 hour' });
      const id = data!.id;
      await suppressed({ email: 'Later@example.com', origin: 'bounce', sourceId: null });
      t.advance(3600_000 + 1000);
      assert.deepEqual((await received(id)).to, ['stays@example.com']);
      await lastEvent(id, 'delivered');
      assert.deepEqual(asked, ['stays@example.com']);
      const refused = (await events(id)).find((e) => e.recipient === 'later@example.com')!;
      assert.deepEqual([refused.type, refused.response], ['suppressed', BOUNCE_MESSAGE]);

      const waiting = (await t.resend.emails.send({ ...base, to: 'waiting@example.com', scheduledAt: 'in 1 hour' })).data!.id;
      await t.resend.suppressions.add({ email: 'waiting@example.com' });
      t.advance(3600_000 + 1000);
      await lastEvent(waiting, 'suppressed');
      assert.deepEqual(asked, ['stays@example.com']);
    });

    it('treats suppressed@resend.dev as on the list (a bounce): never sent, email.suppressed with previous_bounce', async () => {
      const { data } = await t.resend.emails.send({ ...base, to: ['Suppressed@resend.dev', 'delivered@resend.dev'] });
      const id = data!.id;
      await lastEvent(id, 'delivered');
      assert.deepEqual(await statuses(id), { 'Suppressed@resend.dev': 'suppressed', 'delivered@resend.dev': 'delivered' });
      await eventually(() => hooks(id, 'email.suppressed').length === 1);
      assert.deepEqual(hooks(id, 'email.suppressed')[0]!.payload.data.suppressed, { type: 'OnAccountSuppressionList', reason: 'previous_bounce', message: BOUNCE_MESSAGE });
      const alone = (await t.resend.emails.send({ ...base, to: 'suppressed@resend.dev' })).data!.id;
      await lastEvent(alone, 'suppressed');
      assert.deepEqual((await events(alone)).map((e) => e.type), ['suppressed']);
      assert.deepEqual(asked, []);
      assert.equal(smtp.messages.length, 0);
    });

    it('lets mail through again once the entry is removed', async () => {
      await t.resend.suppressions.add({ email: 'returning@example.com' });
      const before = (await t.resend.emails.send({ ...base, to: 'returning@example.com' })).data!.id;
      await lastEvent(before, 'suppressed');
      await t.resend.suppressions.remove('returning@example.com');
      const afterwards = (await t.resend.emails.send({ ...base, to: 'Returning@example.com' })).data!.id;
      assert.deepEqual((await received(afterwards)).to, ['Returning@example.com']);
      await lastEvent(afterwards, 'delivered');
    });
  });
}
