import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

// The guards (issue 38, points 2 and 5) through a real relay (smtp-server) that refuses `bad-*`
// recipients with 550: bounces pass the fail line, the domain's broadcast and an automation's send step
// wait while a transactional email goes out, and PATCH /domains/:id {sending_paused: false} sends the
// rest, each once.
// MAILROOM_GUARD_MIN_SENDS is lowered to 20 (default 200) so that 25 bounces are enough.

const BOUNCES = 25;
const CONTACTS = 10;
const RECHECK_MS = 60_000;

const count = async (t: TestApp, where: (q: any) => any) =>
  Number((await where(t.ctx.db.selectFrom('emails').select((eb: any) => eb.fn.countAll().as('n'))).executeTakeFirstOrThrow()).n);

for (const dialect of dialects) {
  describe(`the sending guards (${dialect})`, () => {
    let relay: TestSmtpServer;
    let hooks: WebhookReceiver;
    let t: TestApp;
    let domainId: string;
    let broadcastId: string;

    before(async () => {
      relay = await startSmtpServer();
      relay.onRecipient = (address) => (address.startsWith('bad-') ? { code: 550, message: '5.1.1 No such user here' } : undefined);
      hooks = await startWebhookReceiver();
      t = await startApp(dialect, {
        env: {
          SMTP_URL: `smtp://127.0.0.1:${relay.port}`,
          MAILROOM_GUARD_MIN_SENDS: '20',
          MAILROOM_GUARD_RECHECK_MS: String(RECHECK_MS),
          MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
        },
      });
      domainId = (await t.resend.domains.create({ name: 'news.test' })).data!.id;
      await t.resend.webhooks.create({ endpoint: hooks.url, events: ['domain.updated'] });
    });
    after(async () => {
      await t.close();
      await relay.close();
      await hooks.close();
    });

    it('pauses the broadcast once bounces pass 4% of the sends, and lets transactional mail through', async () => {
      const bounces = Array.from({ length: BOUNCES }, (_, i) => ({ from: 'Alerts <alerts@news.test>', to: `bad-${i}@dest.test`, subject: 'Alert', text: 'x' }));
      const { error } = await t.resend.batch.send(bounces);
      assert.equal(error, null);
      await eventually(async () => (await count(t, (q) => q.where('last_event', '=', 'bounced'))) === BOUNCES || undefined, 30_000);

      const segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      for (let i = 0; i < CONTACTS; i++) await t.resend.contacts.create({ email: `good-${i}@dest.test`, segments: [{ id: segment }] });
      const sent = await t.resend.broadcasts.create({ segmentId: segment, from: 'News <news@news.test>', subject: 'News', text: 'Hello', send: true } as never);
      broadcastId = (sent.data as { id: string }).id;

      // Every email of the broadcast written, and each one's job given back to wait.
      await eventually(async () => {
        const waiting = await t.ctx.db.selectFrom('jobs').select('id').where('task', '=', 'send-email').where('locked_by', 'is', null).where('run_at', '>', t.clock.now()).execute();
        return (await count(t, (q) => q.where('broadcast_id', '=', broadcastId))) === CONTACTS && waiting.length === CONTACTS;
      }, 30_000);

      const { body: domain } = await requestJson(t, 'GET', `/domains/${domainId}`);
      assert.match(domain.sending_paused.reason, new RegExp(`^Bounce rate 100\\.00% \\(${BOUNCES} of ${BOUNCES} sends in the last 24 hours\\) is above 4\\.00%\\.$`));
      assert.ok(!Number.isNaN(Date.parse(domain.sending_paused.since)));
      const event = await eventually(() => hooks.received.find((h) => h.payload.type === 'domain.updated' && h.payload.data.sending_paused));
      assert.deepEqual(event.payload.data.sending_paused, domain.sending_paused);
      assert.equal(event.payload.data.id, domainId);

      const receipt = (await t.resend.emails.send({ from: 'Alerts <alerts@news.test>', to: 'good-receipt@dest.test', subject: 'Receipt', text: 'Paid' })).data!;
      await eventually(async () => (await t.resend.emails.get(receipt.id)).data?.last_event === 'delivered' || undefined);
      assert.deepEqual(relay.messages.filter((m) => m.parsed.subject === 'News'), []);
      assert.equal(await count(t, (q) => q.where('broadcast_id', '=', broadcastId).where('last_event', '=', 'queued')), CONTACTS);
      const { body: broadcast } = await requestJson(t, 'GET', `/broadcasts/${broadcastId}`);
      assert.deepEqual(broadcast.sending_paused, { ...domain.sending_paused, waiting: CONTACTS });
    });

    it('refuses sending_paused: true in Resend’s shape', async () => {
      const { status, body } = await requestJson(t, 'PATCH', `/domains/${domainId}`, { sending_paused: true });
      assert.equal(status, 422);
      assert.equal(body.name, 'validation_error');
      assert.match(body.message, /sending_paused/);
    });

    it("holds an automation's send_email step while paused: its job waits, no email is written", async () => {
      const template = await t.resend.templates.create({ name: 'tip', alias: 'tip', from: 'News <news@news.test>', subject: 'Tip', html: '<p>A tip</p>' }).publish();
      assert.equal(template.error, null);
      const { error } = await t.resend.automations.create({
        status: 'enabled',
        name: 'Tips',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'tips.start' } },
          { key: 'mail', type: 'send_email', config: { template: { id: template.data.id } } },
        ],
        connections: [{ from: 'start', to: 'mail' }],
      });
      assert.equal(error, null, JSON.stringify(error));
      await t.resend.events.send({ event: 'tips.start', email: 'good-tips@dest.test' });
      await eventually(async () => {
        const waiting = await t.ctx.db.selectFrom('jobs').select('id').where('task', '=', 'automation-step').where('locked_by', 'is', null).where('run_at', '>', t.clock.now()).execute();
        return waiting.length === 1 || undefined;
      });
      assert.equal(await count(t, (q) => q.where('to', 'like', '%good-tips@dest.test%')), 0);
    });

    it('resumes with PATCH {sending_paused: false}: the rest of the broadcast is delivered, each email once', async () => {
      const { status } = await requestJson(t, 'PATCH', `/domains/${domainId}`, { sending_paused: false });
      assert.equal(status, 200);
      const { body: domain } = await requestJson(t, 'GET', `/domains/${domainId}`);
      assert.equal(domain.sending_paused, null);
      await eventually(() => hooks.received.some((h) => h.payload.type === 'domain.updated' && h.payload.data.sending_paused === null) || undefined);

      // The waiting jobs look again after MAILROOM_GUARD_RECHECK_MS.
      t.advance(RECHECK_MS);
      await eventually(async () => (await count(t, (q) => q.where('broadcast_id', '=', broadcastId).where('last_event', '=', 'delivered'))) === CONTACTS || undefined, 30_000);
      const news = relay.messages.filter((m) => m.parsed.subject === 'News').flatMap((m) => m.to).sort();
      assert.deepEqual(news, Array.from({ length: CONTACTS }, (_, i) => `good-${i}@dest.test`).sort());
      await eventually(() => relay.messages.find((m) => m.to.includes('good-tips@dest.test')), 30_000);
      assert.equal(relay.messages.filter((m) => m.to.includes('good-tips@dest.test')).length, 1);
      assert.equal('sending_paused' in (await requestJson(t, 'GET', `/broadcasts/${broadcastId}`)).body, false);
      // The bounces that paused it are not counted again.
      assert.equal((await requestJson(t, 'GET', `/domains/${domainId}`)).body.sending_paused, null);
    });
  });
}
