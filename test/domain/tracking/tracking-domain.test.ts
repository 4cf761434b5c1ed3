import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { domainOf, HOSTNAME, statusBecomes, type Domain } from '../../support/domain-setup.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

// A domain's tracking subdomain: its Tracking CNAME among the records, looked up with the others, and
// the origin of the tracking URLs once it is verified (MAILROOM_PUBLIC_URL before that).

for (const dialect of dialects) {
  describe(`the tracking subdomain (${dialect})`, () => {
    let dns: TestDnsServer;
    let smtp: TestSmtpServer;
    let t: TestApp;
    before(async () => {
      dns = await startDnsServer();
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, SMTP_URL: smtp.url, MAILROOM_PUBLIC_URL: 'https://mail.example.com' } });
    });
    after(async () => {
      await t.close();
      await smtp.close();
      await dns.close();
    });

    /** The html the recipient got of an email from `from`. */
    async function sentHtml(from: string): Promise<string> {
      const { data } = await t.resend.emails.send({ from, to: 'ann@example.org', subject: 'Hi', html: '<p><a href="https://shop.example/">Shop</a></p>' });
      const message = await eventually(() => smtp.messages.find((m) => m.parsed.messageId?.startsWith(`<${data!.id}@`)));
      return message.parsed.html as string;
    }
    const tracking = (domain: Domain) => domain.records.find((r) => r.record === 'Tracking');

    it('lists the Tracking CNAME to the public host, and tracks at the subdomain once it is verified', async () => {
      const { data, error } = await t.resend.domains.create({ name: 'links.test', openTracking: true, clickTracking: true, trackingSubdomain: 'click' });
      assert.equal(error, null);
      const created = data as unknown as Domain;
      assert.deepEqual(tracking(created), { record: 'Tracking', name: 'click', type: 'CNAME', ttl: 'Auto', status: 'not_started', value: 'mail.example.com' });
      const before = await sentHtml('news@links.test');
      assert.match(before, /<a href="https:\/\/mail\.example\.com\/track\/click\/[^"]+">Shop<\/a>/, 'the public URL until the CNAME is verified');

      publishRecords(dns, created);
      await t.resend.domains.verify(created.id);
      const verified = await statusBecomes(t, created.id, 'verified');
      assert.equal(tracking(verified)!.status, 'verified');
      const after = await sentHtml('news@links.test');
      assert.match(after, /<a href="https:\/\/click\.links\.test\/track\/click\/[^"]+">Shop<\/a>/);
      assert.match(after, /<img src="https:\/\/click\.links\.test\/track\/open\/[^"]+"/);

      // Another subdomain is a new record to look up: until then, the public URL again.
      await t.resend.domains.update({ id: created.id, trackingSubdomain: 'go' });
      const changed = await domainOf(t, created.id);
      assert.deepEqual(tracking(changed), { record: 'Tracking', name: 'go', type: 'CNAME', ttl: 'Auto', status: 'pending', value: 'mail.example.com' });
      assert.equal(changed.status, 'verified', 'the optional record does not hold the domain back');
      assert.match(await sentHtml('news@links.test'), /<a href="https:\/\/mail\.example\.com\/track\/click\//);
    });

    it('lists no Tracking record without a tracking subdomain', async () => {
      const { data } = await t.resend.domains.create({ name: 'no-links.test', openTracking: true });
      assert.equal(tracking(data as unknown as Domain), undefined);
    });
  });
}
