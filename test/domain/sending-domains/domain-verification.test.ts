import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, startApp, type TestApp } from '../../support/harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { checked, createDomain, domainOf, HOSTNAME, HOUR, statusBecomes, verifiedDomain } from '../../support/domain-setup.ts';

for (const dialect of dialects) {
  describe(`domain verification (${dialect})`, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME } });
    });
    after(async () => {
      await t.close();
      await dns.close();
    });

    it('POST /domains/:id/verify answers at once; the job finds records as they appear: pending, partially_verified, verified', async () => {
      const domain = await createDomain(t, 'progress.test');
      assert.deepEqual((await t.resend.domains.verify(domain.id)).data, { object: 'domain', id: domain.id });
      await checked(t, domain.id);
      let got = await domainOf(t, domain.id);
      assert.equal(got.status, 'pending');
      assert.deepEqual(got.records.map((r) => r.status), ['pending', 'pending', 'pending', 'pending']);

      publishRecords(dns, domain, ['DKIM']);
      t.advance(3_000); // exp(1) s after the first check
      got = await statusBecomes(t, domain.id, 'partially_verified');
      assert.deepEqual(got.records.map((r) => [r.record, r.type, r.status]), [
        ['SPF', 'MX', 'pending'], ['SPF', 'TXT', 'pending'], ['DKIM', 'TXT', 'verified'], ['DMARC', 'TXT', 'pending'],
      ]);

      publishRecords(dns, domain, ['SPF', 'DMARC']);
      t.advance(8_000); // exp(2) s after the second
      got = await statusBecomes(t, domain.id, 'verified');
      assert.deepEqual(got.records.map((r) => r.status), ['verified', 'verified', 'verified', 'verified']);
    });

    it('does not wait for the DMARC recommendation', async () => {
      const domain = await createDomain(t, 'nodmarc.test');
      publishRecords(dns, domain, ['SPF', 'DKIM']);
      await t.resend.domains.verify(domain.id);
      const got = await statusBecomes(t, domain.id, 'verified');
      assert.equal(got.records[3]!.status, 'pending');
    });

    it('a key record with whitespace split by the DNS provider, or a wrong key, is read as it should be', async () => {
      const split = await createDomain(t, 'split.test');
      const wrong = await createDomain(t, 'wrong.test');
      publishRecords(dns, split, ['SPF']);
      publishRecords(dns, wrong, ['SPF']);
      const key = split.records[2]!.value;
      dns.add(`mailroom._domainkey.split.test`, { TXT: [`v=DKIM1; k=rsa; ${key.slice(0, 100)} ${key.slice(100)}`] });
      dns.add(`mailroom._domainkey.wrong.test`, { TXT: [key] });
      await t.resend.domains.verify(split.id);
      await t.resend.domains.verify(wrong.id);
      await statusBecomes(t, split.id, 'verified');
      await checked(t, wrong.id);
      assert.equal((await domainOf(t, wrong.id)).status, 'partially_verified');
    });

    it('fails a domain whose records are not all found within 72 hours; verify starts a new window', async () => {
      const domain = await createDomain(t, 'never.test');
      await t.resend.domains.verify(domain.id);
      await checked(t, domain.id);
      t.advance(72 * HOUR + 1000);
      const got = await statusBecomes(t, domain.id, 'failed');
      assert.deepEqual(got.records.map((r) => r.status), ['failed', 'failed', 'failed', 'pending']);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `verify-domain:${domain.id}`).executeTakeFirst(), undefined);

      publishRecords(dns, domain);
      await t.resend.domains.verify(domain.id);
      await statusBecomes(t, domain.id, 'verified');
    });

    it('re-checks a verified domain daily: a lost record is temporary_failure, then verified again, or failed after 72 hours', async () => {
      const domain = await verifiedDomain(t, dns, 'flaky.test');
      const saved = dns.zone.get('mailroom._domainkey.flaky.test')!;
      dns.zone.delete('mailroom._domainkey.flaky.test');

      t.advance(24 * HOUR + 1000);
      let got = await statusBecomes(t, domain.id, 'temporary_failure');
      assert.deepEqual(got.records.map((r) => r.status), ['verified', 'verified', 'temporary_failure', 'verified']);

      dns.zone.set('mailroom._domainkey.flaky.test', saved);
      t.advance(2_000);
      await statusBecomes(t, domain.id, 'verified');

      dns.zone.delete('mailroom._domainkey.flaky.test');
      t.advance(24 * HOUR + 1000);
      await statusBecomes(t, domain.id, 'temporary_failure');
      t.advance(72 * HOUR + 1000);
      got = await statusBecomes(t, domain.id, 'failed');
      assert.equal(got.records[2]!.status, 'failed');
    });

    it('deleting a domain removes its pending checks', async () => {
      const domain = await createDomain(t, 'gone.test');
      await t.resend.domains.verify(domain.id);
      await checked(t, domain.id);
      await t.resend.domains.remove(domain.id);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', `verify-domain:${domain.id}`).executeTakeFirst(), undefined);
    });
  });
}
