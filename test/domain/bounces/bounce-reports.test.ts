import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../../support/inbound.ts';
import { arf, dsn } from '../../support/reports.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const base = { from: 'Acme <news@example.com>', subject: 'Hello', text: 'Hi' };

for (const dialect of dialects) {
  describe(`bounce and complaint reports by mail (${dialect})`, () => {
    let relay: TestSmtpServer;
    let receiver: WebhookReceiver;
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;

    const lastEvent = (id: string, expected: string) =>
      eventually(async () => (await t.resend.emails.get(id)).data?.last_event === expected || undefined);
    const statuses = async (id: string) =>
      Object.fromEntries(
        (await t.ctx.db.selectFrom('email_recipients').select(['address', 'status']).where('email_id', '=', id).execute()).map((r) => [r.address, r.status]),
      );
    const suppression = async (email: string) => (await t.resend.suppressions.get(email)).data;
    /** Sends an email through the relay and waits for its delivery; the VERP address each recipient's copy went out with. */
    async function delivered(to: string[]): Promise<{ id: string; verp: Record<string, string> }> {
      const { data } = await t.resend.emails.send({ ...base, to });
      await lastEvent(data!.id, 'delivered');
      const copies = relay.messages.filter((m) => m.parsed.messageId === `<${data!.id}@example.com>`);
      return { id: data!.id, verp: Object.fromEntries(copies.map((m) => [m.to[0]!, m.from])) };
    }
    /** Mails a report to the inbound port, as a remote server would: to the envelope sender it got. */
    const report = async (to: string, raw: Buffer) => (await sendTo(inbound.port, { envelope: { from: 'mailer-daemon@relay.test', to }, raw })).response;

    before(async () => {
      relay = await startSmtpServer();
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { ...INBOUND_ENV, SMTP_URL: relay.url, RELAY_ENVELOPE_SENDER: 'verp', MAILROOM_HOSTNAME: 'mail.mailroom.test', MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      inbound = await startInbound(t);
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['email.bounced', 'email.complained', 'email.delivery_delayed', 'suppression.added'] });
    });
    after(async () => {
      await inbound.close();
      await t.close();
      await receiver.close();
      await relay.close();
    });
    afterEach(() => {
      relay.messages.length = 0;
      relay.onRecipient = () => undefined;
    });

    it('turns an email bounced on a DSN to its VERP address, suppresses that recipient only, and lets it through once removed', async () => {
      const { id, verp } = await delivered(['gone@example.com', 'stays@example.com']);
      assert.match(verp['gone@example.com']!, /^bounces\+[0-9a-f]{48}@mail\.mailroom\.test$/);
      assert.notEqual(verp['gone@example.com'], verp['stays@example.com']);

      const answer = await report(verp['gone@example.com']!, await dsn(verp['gone@example.com']!, `<${id}@example.com>`, [
        { recipient: 'gone@example.com', action: 'failed', status: '5.1.1', diagnostic: 'smtp; 550 5.1.1 <gone@example.com>: user unknown' },
      ]));
      assert.match(answer, /^250/);
      await lastEvent(id, 'bounced');
      assert.deepEqual(await statuses(id), { 'gone@example.com': 'bounced', 'stays@example.com': 'delivered' });
      const entry = await suppression('gone@example.com');
      assert.deepEqual([entry?.origin, entry?.source_id], ['bounce', id]);
      assert.equal((await t.resend.suppressions.get('stays@example.com')).error?.statusCode, 404, 'the other recipient is not suppressed');
      const hook = await eventually(() => receiver.received.find((h) => h.payload.type === 'email.bounced' && h.payload.data.email_id === id));
      assert.deepEqual(hook.payload.data.bounce, {
        diagnosticCode: ['5.1.1 smtp; 550 5.1.1 <gone@example.com>: user unknown'],
        message: '5.1.1 smtp; 550 5.1.1 <gone@example.com>: user unknown',
        type: 'Permanent',
        subType: 'NoEmail',
      });

      relay.messages.length = 0;
      const { data: next } = await t.resend.emails.send({ ...base, to: ['gone@example.com', 'other@example.com'] });
      await eventually(async () => (await statuses(next!.id))['other@example.com'] === 'delivered' || undefined);
      assert.equal((await statuses(next!.id))['gone@example.com'], 'suppressed');
      assert.deepEqual(relay.messages.map((m) => m.to), [['other@example.com']], 'the suppressed address never reaches the relay');

      await t.resend.suppressions.remove('gone@example.com');
      const { data: again } = await t.resend.emails.send({ ...base, to: 'gone@example.com' });
      await lastEvent(again!.id, 'delivered');
    });

    it('records a report delivered twice once: by its Message-ID, else by its body', async () => {
      const bouncedEvents = async (id: string, type: string) =>
        (await t.ctx.db.selectFrom('email_events').select('id').where('email_id', '=', id).where('type', '=', type).execute()).length;
      const { id, verp } = await delivered(['twice@example.com', 'late@example.com']);
      const to = verp['twice@example.com']!;
      const raw = await dsn(to, `<${id}@example.com>`, [{ recipient: 'twice@example.com', action: 'failed', status: '5.1.1' }]);
      assert.match(await report(to, raw), /^250/);
      await lastEvent(id, 'bounced');
      assert.match(await report(to, raw), /^250/);
      const late = verp['late@example.com']!;
      const anonymous = (await dsn(late, `<${id}@example.com>`, [{ recipient: 'late@example.com', action: 'delayed', status: '4.4.7' }])).toString().replace(/^Message-ID: .*\r\n/m, '');
      assert.match(await report(late, Buffer.from(anonymous)), /^250/);
      assert.match(await report(late, Buffer.from(anonymous)), /^250/);
      await eventually(async () => (await bouncedEvents(id, 'delivery_delayed')) > 0 || undefined);
      assert.equal(await bouncedEvents(id, 'bounced'), 1, 'the DSN with a Message-ID, twice: one event');
      assert.equal(await bouncedEvents(id, 'delivery_delayed'), 1, 'the DSN without one, twice: one event');
    });

    it('records a transient DSN as delivery_delayed without suppressing', async () => {
      const { id, verp } = await delivered(['full@example.com']);
      const to = verp['full@example.com']!;
      await report(to, await dsn(to, `<${id}@example.com>`, [{ recipient: 'full@example.com', action: 'delayed', status: '4.2.2', diagnostic: 'smtp; 452 4.2.2 Mailbox full' }]));
      await lastEvent(id, 'delivery_delayed');
      assert.equal((await t.resend.suppressions.get('full@example.com')).error?.statusCode, 404);
    });

    it('leaves a delivered recipient delivered when a transient DSN comes after: the retry for another recipient sends it no second copy', async () => {
      let later = false;
      relay.onRecipient = (address) => (address === 'slow@example.com' && !later ? { code: 451, message: '4.3.0 Try again later' } : undefined);
      const { data } = await t.resend.emails.send({ ...base, to: ['quick@example.com', 'slow@example.com'] });
      const id = data!.id;
      await eventually(async () => {
        const now = await statuses(id);
        return (now['quick@example.com'] === 'delivered' && now['slow@example.com'] === 'delivery_delayed') || undefined;
      });
      const to = relay.messages.find((m) => m.to[0] === 'quick@example.com')!.from;
      await report(to, await dsn(to, `<${id}@example.com>`, [{ recipient: 'quick@example.com', action: 'delayed', status: '4.4.7', diagnostic: 'smtp; 451 4.4.7 Delivery delayed' }]));
      await eventually(async () => {
        const { body } = await requestJson(t, 'GET', `/emails/${id}/events`);
        return (body.data as { type: string; recipient: string }[]).filter((e) => e.type === 'delivery_delayed' && e.recipient === 'quick@example.com').length === 1 || undefined;
      });
      assert.equal((await statuses(id))['quick@example.com'], 'delivered', 'the report is recorded, the recipient stays delivered');

      later = true;
      t.advance(3_000); // the retry of slow@
      await eventually(async () => (await statuses(id))['slow@example.com'] === 'delivered' || undefined);
      assert.deepEqual(relay.messages.map((m) => m.to[0]).sort(), ['quick@example.com', 'slow@example.com'], 'one copy each');
    });

    it('records an ARF report as complained: suppressed as a complaint, and the contact unsubscribed', async () => {
      await t.resend.contacts.create({ email: 'angry@example.com' });
      const { id, verp } = await delivered(['angry@example.com']);
      const to = verp['angry@example.com']!;
      assert.match(await report(to, await arf(to, `<${id}@example.com>`, 'angry@example.com')), /^250/);
      await lastEvent(id, 'complained');
      assert.deepEqual([(await suppression('angry@example.com'))?.origin, (await suppression('angry@example.com'))?.source_id], ['complaint', id]);
      assert.equal((await t.resend.contacts.get('angry@example.com')).data!.unsubscribed, true);
      await eventually(() => receiver.received.find((h) => h.payload.type === 'email.complained' && h.payload.data.email_id === id));
    });

    it('accepts and ignores a forged VERP token, a malformed report and a report about no email of ours', async () => {
      const { id, verp } = await delivered(['target@example.com']);
      const real = verp['target@example.com']!;
      const forged = real.replace(/[0-9a-f](?=@)/, (digit) => (digit === '0' ? '1' : '0'));
      const failed = [{ recipient: 'target@example.com', action: 'failed', status: '5.1.1' }];
      assert.match(await report(forged, await dsn(forged, `<${id}@example.com>`, failed)), /^250/);
      assert.match(await report(real, Buffer.from('Subject: not a report\r\n\r\nhello\r\n')), /^250/);
      const unknown = 'bounces+0192e3a4444470008000000000000000aaaaaaaaaaaaaaaa@mail.mailroom.test';
      assert.match(await report(unknown, await dsn(unknown, '<x@example.com>', failed)), /^250/);
      assert.match(await report(real, Buffer.from('Content-Type: multipart/report; report-type=delivery-status\r\n\r\n--x\r\nStatus: 5.1.1\r\n')), /^250/);
      // The listener is still up, and nothing changed.
      const { id: later } = await delivered(['target@example.com']);
      assert.ok(later);
      assert.equal((await t.resend.emails.get(id)).data?.last_event, 'delivered');
      assert.equal((await t.resend.suppressions.get('target@example.com')).error?.statusCode, 404);
    });

    it('records a DSN sent to a receiving address, matched by its original Message-ID, without suppressing anyone', async () => {
      await receivingDomain(t, 'inbox.test');
      const { id } = await delivered(['moved@example.com', 'kept@example.com']);
      const raw = await dsn('postmaster@inbox.test', `<${id}@example.com>`, [{ recipient: 'moved@example.com', action: 'failed', status: '5.1.6', diagnostic: 'smtp; 550 5.1.6 mailbox moved' }]);
      assert.match(await report('postmaster@inbox.test', raw), /^250/);
      await lastEvent(id, 'bounced');
      assert.deepEqual(await statuses(id), { 'moved@example.com': 'bounced', 'kept@example.com': 'delivered' });
      const { data: events } = (await t.fetch(`/emails/${id}/events`).then((r) => r.json())) as { data: { type: string; response: string }[] };
      const bounced = events.find((e) => e.type === 'bounced')!;
      assert.match(bounced.response, /^5\.1\.6 .*\(unverified: matched by Message-ID, not by a VERP address\)$/);
      assert.equal((await t.resend.suppressions.get('moved@example.com')).error?.statusCode, 404, 'a Message-ID is no proof: nobody is suppressed');
      const { data: inbox } = await t.resend.emails.receiving.list();
      assert.ok(inbox?.data.some((m) => m.to.includes('postmaster@inbox.test')), 'kept as a received email too');
    });

    it('lets no one suppress or unsubscribe a co-recipient with a report quoting a Message-ID', async () => {
      await receivingDomain(t, 'abuse-desk.test');
      await t.resend.contacts.create({ email: 'victim@example.com' });
      const { id } = await delivered(['victim@example.com', 'attacker@example.com']);
      const forgedDsn = await dsn('abuse@abuse-desk.test', `<${id}@example.com>`, [{ recipient: 'victim@example.com', action: 'failed', status: '5.1.1' }]);
      assert.match(await report('abuse@abuse-desk.test', forgedDsn), /^250/);
      assert.match(await report('abuse@abuse-desk.test', await arf('abuse@abuse-desk.test', `<${id}@example.com>`, 'victim@example.com')), /^250/);
      await lastEvent(id, 'complained');
      assert.equal((await t.resend.suppressions.get('victim@example.com')).error?.statusCode, 404);
      assert.equal((await t.resend.contacts.get('victim@example.com')).data!.unsubscribed, false);
    });
  });
}
