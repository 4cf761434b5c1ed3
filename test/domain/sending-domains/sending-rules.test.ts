import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Resend } from 'resend';
import { dialects, rowCount, startApp, type TestApp } from '../../support/harness.ts';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { createDomain, HOSTNAME, HOUR, statusBecomes, verifiedDomain, type Domain } from '../../support/domain-setup.ts';

for (const dialect of dialects) {
  describe(`sending rules on the from domain (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    let verified: Domain;
    const email = (from: string) => ({ from, to: 'someone@example.org', subject: 'Hi', text: 'Hello' });
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, MAILROOM_REQUIRE_VERIFIED_DOMAIN: 'true' } });
      verified = await verifiedDomain(t, dns, 'verified.test');
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('MAILROOM_REQUIRE_VERIFIED_DOMAIN: a from on a domain that is not verified is 403 validation_error', async () => {
      const pending = await createDomain(t, 'pending.test');
      await t.resend.domains.verify(pending.id);
      for (const from of ['a@unknown.test', 'Acme <a@pending.test>', 'onboarding@resend.dev']) {
        const { data, error } = await t.resend.emails.send(email(from));
        assert.equal(data, null, from);
        assert.equal(error?.statusCode, 403, from);
        assert.equal(error?.name, 'validation_error');
        const domain = from.replace(/.*@|>/g, '');
        assert.equal(
          error?.message,
          `The ${domain} domain is not verified. Please, add and verify your domain with POST /domains and POST /domains/:id/verify (see docs/domains.md).`,
        );
      }
      const batch = await t.resend.batch.send([email('a@verified.test'), email('b@unknown.test')]);
      assert.equal(batch.error?.statusCode, 403);
      assert.match(batch.error.message, /^Email at index 1: The unknown\.test domain is not verified/);

      assert.equal((await t.resend.emails.send(email('Acme <hello@Verified.TEST>'))).error, null);
    });

    it('applies to the from a template gives', async () => {
      await t.resend.templates.create({ name: 'elsewhere', alias: 'from-elsewhere', html: '<p>Hi</p>', subject: 'S', from: 'a@elsewhere.test' }).publish();
      await t.resend.templates.create({ name: 'ours', alias: 'from-verified', html: '<p>Hi</p>', subject: 'S', from: 'a@verified.test' }).publish();
      const refused = await t.resend.emails.send({ to: 'someone@example.org', template: { id: 'from-elsewhere' } });
      assert.equal(refused.error?.statusCode, 403);
      assert.match(refused.error.message, /^The elsewhere\.test domain is not verified/);
      assert.equal((await t.resend.emails.send({ to: 'someone@example.org', template: { id: 'from-verified' } })).error, null);
    });

    it('applies to a broadcast when it is sent: a draft may name any from, sending it may not', async () => {
      const segment = (await t.resend.segments.create({ name: 'Rules' })).data!.id;
      const broadcast = (from: string) => ({ segmentId: segment, from, subject: 'S', html: '<p>Hi</p>' });
      const refused = await t.resend.broadcasts.create({ ...broadcast('news@elsewhere.test'), send: true });
      assert.equal(refused.error?.statusCode, 403);
      assert.match(refused.error.message, /^The elsewhere\.test domain is not verified/);
      const { data: draft } = await t.resend.broadcasts.create(broadcast('news@elsewhere.test'));
      assert.match((await t.resend.broadcasts.send(draft!.id)).error!.message, /^The elsewhere\.test domain is not verified/);
      assert.equal((await t.resend.broadcasts.get(draft!.id)).data!.status, 'draft');
      await t.resend.broadcasts.update(draft!.id, { from: 'News <news@verified.test>' });
      assert.equal((await t.resend.broadcasts.send(draft!.id)).error, null);
    });

    it('a sending_access key with a domain_id sends only from that domain', async () => {
      const { data: key } = await t.resend.apiKeys.create({ name: 'verified only', permission: 'sending_access', domain_id: verified.id });
      const sender = new Resend(key!.token, { baseUrl: t.url });
      assert.equal((await sender.emails.send(email('hi@verified.test'))).error, null);
      const { error } = await sender.emails.send(email('hi@elsewhere.test'));
      assert.deepEqual(error, { statusCode: 403, name: 'validation_error', message: 'This API key can only send from the verified.test domain.' });
      const batch = await sender.batch.send([email('a@verified.test'), email('b@elsewhere.test')], { batchValidation: 'permissive' });
      assert.deepEqual(batch.data!.errors.map((e) => e.index), [1]);

      const unknown = await t.resend.apiKeys.create({ name: 'nowhere', permission: 'sending_access', domain_id: '0190a000-0000-7000-8000-000000000000' });
      assert.equal(unknown.error?.name, 'validation_error');
      assert.match(unknown.error.message, /`domain_id`/);
    });

    it('a key bound to a domain shows no other one through custom headers: a Sender or From there is 422 naming the header, nothing stored', async () => {
      const { data: key } = await t.resend.apiKeys.create({ name: 'verified headers', permission: 'sending_access', domain_id: verified.id });
      const sender = new Resend(key!.token, { baseUrl: t.url });
      const before = await rowCount(t, 'emails');
      const cases: [Record<string, string>, string][] = [
        [{ Sender: 'ceo@elsewhere.test' }, 'Invalid `headers.Sender` field: the `from` field says who sends an email; a Sender header is not accepted.'],
        [{ SENDER: 'ceo@elsewhere.test' }, 'Invalid `headers.SENDER` field: the `from` field says who sends an email; a Sender header is not accepted.'],
        [{ From: 'ceo@elsewhere.test' }, 'Invalid `headers.From` field: this header is set from the email fields; use those instead.'],
      ];
      for (const [headers, message] of cases) {
        const { error } = await sender.emails.send({ ...email('hi@verified.test'), headers });
        assert.deepEqual(error, { statusCode: 422, name: 'validation_error', message }, JSON.stringify(headers));
      }
      const batch = await sender.batch.send([email('a@verified.test'), { ...email('b@verified.test'), headers: { Sender: 'ceo@elsewhere.test' } }]);
      assert.equal(batch.error?.statusCode, 422);
      assert.match(batch.error.message, /^Email at index 1: Invalid `headers\.Sender` field/);
      assert.equal(await rowCount(t, 'emails'), before);
    });

    it('a verified domain in temporary_failure still sends; a failed one does not', async () => {
      const domain = await verifiedDomain(t, dns, 'wobbly.test');
      dns.zone.delete('send.wobbly.test');
      t.advance(24 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'temporary_failure');
      assert.equal((await t.resend.emails.send(email('a@wobbly.test'))).error, null);
      t.advance(72 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'failed');
      assert.equal((await t.resend.emails.send(email('a@wobbly.test'))).error?.statusCode, 403);
    });
  });

  describe(`sending rules when verification is not required (${dialect})`, () => {
    it('capture and relay modes send from any domain unless MAILROOM_REQUIRE_VERIFIED_DOMAIN says otherwise', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        assert.equal((await t.resend.emails.send({ from: 'a@unverified.test', to: 'b@example.org', subject: 's', text: 't' })).error, null);
      } finally {
        await t.close();
      }
    });
  });
}
