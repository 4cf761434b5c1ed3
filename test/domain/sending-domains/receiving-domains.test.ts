import assert from 'node:assert/strict';
import type { Resolver } from 'node:dns/promises';
import { after, before, describe, it } from 'node:test';
import { mayReceive } from '../../../src/domain/sending-domains/receiving-domain.ts';
import { dialects, runByHand, eventually, requestJson, startApp, type TestApp } from '../../support/harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { checked, createDomain, domainOf, HOSTNAME, HOUR, statusBecomes, verifiedDomain, type Domain } from '../../support/domain-setup.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

const receivingRecord = (status: string) => ({ record: 'Receiving', name: '@', type: 'MX', ttl: 'Auto', status, value: HOSTNAME, priority: 10 });
const receivingOf = (domain: Domain) => domain.records.find((r) => r.record === 'Receiving');

async function createReceiving(t: TestApp, name: string, sending: 'enabled' | 'disabled' = 'enabled'): Promise<Domain> {
  const { data, error } = await t.resend.domains.create({ name, capabilities: { sending, receiving: 'enabled' } });
  assert.equal(error, null);
  return data;
}

async function setReceiving(t: TestApp, id: string, receiving: 'enabled' | 'disabled') {
  return t.resend.domains.update({ id, capabilities: { receiving } });
}

/** The records of the last `type` event the log holds for domain `id`. */
async function loggedRecords(t: TestApp, type: string, id: string): Promise<{ record: string; status: string }[]> {
  const rows = await t.ctx.db.selectFrom('events').select('data').where('type', '=', type).orderBy('id').execute();
  return rows.map((row) => JSON.parse(row.data)).filter((data) => data.id === id).at(-1)!.records;
}

const verifyJob = (t: TestApp, id: string) => t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', `verify-domain:${id}`).executeTakeFirst();

for (const dialect of dialects) {
  describe(`receiving domains (${dialect})`, () => {
    let dns: TestDnsServer;
    let receiver: WebhookReceiver;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      // The log keeps an event only for an endpoint subscribed to it.
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['domain.created', 'domain.updated'] });
    });
    after(async () => {
      await t.close();
      await dns.close();
      await receiver.close();
    });

    it('creates a domain with receiving enabled: the Receiving MX on the domain itself, after the sending records', async () => {
      const created = await createReceiving(t, 'in.example.com');
      assert.deepEqual((created as Domain & { capabilities: unknown }).capabilities, { sending: 'enabled', receiving: 'enabled' });
      assert.deepEqual(created.records.map((r) => r.record), ['SPF', 'SPF', 'DKIM', 'DMARC', 'Receiving', 'MTA-STS', 'MTA-STS', 'TLS-RPT']);
      assert.deepEqual(receivingOf(created), receivingRecord('not_started'));
      assert.deepEqual((await domainOf(t, created.id)).records, created.records);
      const row = (await t.resend.domains.list()).data!.data.find((d) => d.id === created.id)!;
      assert.deepEqual(row.capabilities, { sending: 'enabled', receiving: 'enabled' });
      assert.deepEqual((await loggedRecords(t, 'domain.created', created.id)).find((r) => r.record === 'Receiving'), receivingRecord('not_started'));
    });

    it('a domain may only receive: the Receiving MX is its one record, and it does not send', async () => {
      const created = await createReceiving(t, 'inbox.example.com', 'disabled');
      assert.deepEqual(created.records.map((r) => r.record), ['Receiving', 'MTA-STS', 'MTA-STS', 'TLS-RPT'], 'its MTA-STS and TLS-RPT beside it: mta-sts.test.ts');
      assert.deepEqual(receivingOf(created), receivingRecord('not_started'));
      const { error } = await t.resend.emails.send({ from: 'a@inbox.example.com', to: 'b@example.org', subject: 'S', text: 'T' });
      assert.deepEqual(error, {
        statusCode: 403,
        name: 'validation_error',
        message: 'The inbox.example.com domain does not send: its `capabilities.sending` is "disabled" (see docs/domains.md).',
      });
      const refused = await setReceiving(t, created.id, 'disabled');
      assert.equal(refused.error?.statusCode, 422);
      assert.match(refused.error.message, /^At least one capability must be enabled/);
      assert.equal((await domainOf(t, created.id) as unknown as { capabilities: { receiving: string } }).capabilities.receiving, 'enabled');
    });

    it('PATCH switches receiving: before the first verify call the record waits for it; disabling removes it', async () => {
      const domain = await createDomain(t, 'switch.example.com');
      // As a row written before the Receiving record: its statuses do not name it.
      const before = JSON.stringify({ spf_mx: 'not_started', spf_txt: 'not_started', dkim: 'not_started', dmarc: 'not_started' });
      await t.ctx.db.updateTable('domains').set({ record_statuses: before }).where('id', '=', domain.id).execute();
      assert.deepEqual((await domainOf(t, domain.id)).records, domain.records);
      assert.deepEqual((await setReceiving(t, domain.id, 'enabled')).data, { object: 'domain', id: domain.id });
      let got = await domainOf(t, domain.id);
      assert.deepEqual(receivingOf(got), receivingRecord('not_started'));
      assert.equal(got.status, 'not_started');
      assert.equal(await verifyJob(t, domain.id), undefined, 'no check before the verify call');
      assert.deepEqual((await loggedRecords(t, 'domain.updated', domain.id)).find((r) => r.record === 'Receiving'), receivingRecord('not_started'));

      await setReceiving(t, domain.id, 'disabled');
      got = await domainOf(t, domain.id);
      assert.deepEqual(got.records.map((r) => r.record), ['SPF', 'SPF', 'DKIM', 'DMARC']);
      assert.ok(!(await loggedRecords(t, 'domain.updated', domain.id)).some((r) => r.record === 'Receiving'));
    });

    it('verification looks the Receiving MX up; the domain status speaks for sending alone', async () => {
      const domain = await createReceiving(t, 'verify-in.test');
      publishRecords(dns, domain, ['SPF', 'DKIM', 'DMARC']);
      await t.resend.domains.verify(domain.id);
      let got = await statusBecomes(t, domain.id, 'verified');
      assert.deepEqual(receivingOf(got), receivingRecord('pending'), 'a missing Receiving MX does not hold the domain up');

      publishRecords(dns, domain, ['Receiving']);
      await t.resend.domains.verify(domain.id);
      got = await eventually(async () => {
        const current = await domainOf(t, domain.id);
        return receivingOf(current)!.status === 'verified' && current;
      });
      assert.equal(got.status, 'verified');

      // A lost Receiving MX is seen at the daily check; the domain still sends.
      dns.zone.delete('verify-in.test');
      t.advance(24 * HOUR + 1000);
      got = await eventually(async () => {
        const current = await domainOf(t, domain.id);
        return receivingOf(current)!.status === 'pending' && current;
      });
      assert.equal(got.status, 'verified');
    });

    it('a domain that only receives is verified by its Receiving MX', async () => {
      const domain = await createReceiving(t, 'only-in.test', 'disabled');
      await t.resend.domains.verify(domain.id);
      await checked(t, domain.id);
      assert.equal((await domainOf(t, domain.id)).status, 'pending');
      publishRecords(dns, domain);
      t.advance(3_000);
      const got = await statusBecomes(t, domain.id, 'verified');
      assert.deepEqual(receivingOf(got), receivingRecord('verified'));
      assert.deepEqual(got.records.map((r) => r.status), ['verified', 'verified', 'verified', 'verified'], 'MTA-STS and TLS-RPT published too');
    });

    it('PATCH enabling receiving on a verified domain looks the record up at once', async () => {
      const domain = await verifiedDomain(t, dns, 'later.test');
      dns.add('later.test', { MX: [{ exchange: HOSTNAME, priority: 10 }] });
      await setReceiving(t, domain.id, 'enabled');
      const got = await eventually(async () => {
        const current = await domainOf(t, domain.id);
        return receivingOf(current)!.status === 'verified' && current;
      });
      assert.equal(got.status, 'verified');
    });

    it('switching sending makes a checked domain pending again, its status now made by the enabled records', async () => {
      const domain = await createReceiving(t, 'turn.test');
      publishRecords(dns, domain, ['Receiving']);
      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities: { sending: 'disabled' } });
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');

      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities: { sending: 'enabled' } });
      await checked(t, domain.id);
      const got = await domainOf(t, domain.id);
      assert.equal(got.status, 'pending', 'the sending records are not published: it may not send');
      assert.deepEqual(got.records.map((r) => [r.record, r.status]), [
        ['SPF', 'pending'], ['SPF', 'pending'], ['DKIM', 'pending'], ['DMARC', 'pending'], ['Receiving', 'verified'], ['MTA-STS', 'pending'], ['MTA-STS', 'pending'], ['TLS-RPT', 'pending'],
      ]);
    });

    it('mayReceive in capture mode: receiving enabled is enough, before any DNS', async () => {
      const domain = await createReceiving(t, 'capture-in.test');
      await createDomain(t, 'send-only.test');
      assert.equal(await mayReceive(t.ctx, 'capture-in.test'), true);
      assert.equal(await mayReceive(t.ctx, 'send-only.test'), false);
      assert.equal(await mayReceive(t.ctx, 'unknown.test'), false);
      await setReceiving(t, domain.id, 'disabled');
      assert.equal(await mayReceive(t.ctx, 'capture-in.test'), false, 'a change in this process shows at once');
    });

    it('refuses bad capabilities on PATCH in Resend’s error shape, changing nothing', async () => {
      const domain = await createDomain(t, 'bad.example.com');
      for (const capabilities of [{ receiving: 'on' }, { sending: 'disabled' }, { receiving: 42 }]) {
        const { status, body } = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities });
        assert.equal(status, 422, JSON.stringify(capabilities));
        assert.equal(body.statusCode, 422);
        assert.equal(body.name, 'validation_error');
        assert.match(body.message, /`capabilities\.receiving`|At least one capability/);
      }
      assert.deepEqual((await domainOf(t, domain.id)).records, domain.records);
    });
  });

  describe(`receiving where sending needs a verified domain (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, {
        env: {
          DNS_SERVERS: dns.address,
          MAILROOM_HOSTNAME: HOSTNAME,
          DELIVERY_MODE: 'relay',
          SMTP_URL: 'smtp://127.0.0.1:2',
          MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'true',
        },
      });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('mayReceive waits for the Receiving record, not for the domain', async () => {
      const domain = await createReceiving(t, 'strict.test');
      assert.equal(await mayReceive(t.ctx, 'strict.test'), false);
      publishRecords(dns, domain, ['SPF', 'DKIM']);
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');
      assert.equal(await mayReceive(t.ctx, 'strict.test'), false, 'a domain verified for sending');

      publishRecords(dns, domain, ['Receiving']);
      await t.resend.domains.verify(domain.id);
      await eventually(() => mayReceive(t.ctx, 'strict.test'));
    });
  });

  describe(`a check that overlaps a switch of capabilities (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { worker: false, env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME } });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('writes nothing and looks again, with the new records', async () => {
      const domain = await createDomain(t, 'overlap.test');
      publishRecords(dns, domain);
      dns.add('overlap.test', { MX: [{ exchange: HOSTNAME, priority: 10 }] });
      await t.resend.domains.verify(domain.id);
      // A worker holds the check; the switch lands while it looks the records up.
      await t.ctx.db.updateTable('jobs').set({ locked_by: 'worker-a', locked_at: t.clock.now() }).where('key', '=', `verify-domain:${domain.id}`).execute();
      const job = (await verifyJob(t, domain.id))!;
      let switched = false;
      const resolver = Object.create(t.ctx.dns) as Resolver;
      resolver.resolveMx = async (name) => {
        if (!switched) {
          switched = true;
          await setReceiving(t, domain.id, 'enabled');
        }
        return t.ctx.dns.resolveMx(name);
      };
      await runByHand({ ...t.ctx, dns: resolver }, job);
      let got = await domainOf(t, domain.id);
      assert.equal(got.status, 'pending', 'the check of the old records wrote nothing');
      assert.equal(receivingOf(got)!.status, 'pending');
      const again = (await verifyJob(t, domain.id))!;
      assert.equal(again.id, job.id);
      assert.equal(again.locked_at, null, 'it is due again');

      await runByHand(t.ctx, again);
      got = await domainOf(t, domain.id);
      assert.equal(got.status, 'verified');
      assert.equal(receivingOf(got)!.status, 'verified');
    });
  });

  describe(`receiving in relay mode without MAILROOM_REQUIRE_VERIFIED_DOMAIN (${dialect})`, () => {
    it('mayReceive does not wait for DNS, as sending does not', async () => {
      const t = await startApp(dialect, { worker: false, env: { DELIVERY_MODE: 'relay', SMTP_URL: 'smtp://127.0.0.1:2' } });
      try {
        await createReceiving(t, 'relay-in.test');
        assert.equal(await mayReceive(t.ctx, 'relay-in.test'), true);
      } finally {
        await t.close();
      }
    });
  });
}
