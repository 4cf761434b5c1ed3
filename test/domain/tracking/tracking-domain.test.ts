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

    it("serves the tracking subdomain as Resend's tracking domain: create, read, verify through DNS, change, delete", async () => {
      type TrackingDomain = { object: string; id: string; name: string; full_name: string; status: string; records: object[]; created_at: string };
      const { data: domain } = await t.resend.domains.create({ name: 'routes.test', openTracking: true, clickTracking: true });
      const base = `/domains/${domain!.id}/tracking`;
      assert.deepEqual((await t.resend.get(base)).data, { object: 'list', has_more: false, data: [] });
      assert.equal((await t.resend.post(base, {})).error?.name, 'missing_required_field');
      assert.equal((await t.resend.post(base, { subdomain: 'not a name' })).error?.statusCode, 422);

      const created = await t.resend.post<TrackingDomain>(base, { subdomain: 'Links' });
      assert.equal(created.error, null, JSON.stringify(created.error));
      const { id, created_at } = created.data;
      const record = (name: string, status: string) => ({ type: 'CNAME', name, value: 'mail.example.com', status });
      assert.deepEqual(created.data, { object: 'tracking_domain', id, name: 'links', full_name: 'links.routes.test', status: 'pending', records: [record('links', 'pending')], created_at });
      assert.deepEqual((await t.resend.get(base)).data, { object: 'list', has_more: false, data: [created.data] });
      assert.deepEqual((await t.resend.get(`${base}/${id}`)).data, created.data);
      // The same as the domain's `tracking_subdomain` and its Tracking record.
      const withRecord = await domainOf(t, domain!.id);
      assert.equal((withRecord as unknown as { tracking_subdomain: string }).tracking_subdomain, 'links');
      assert.equal(tracking(withRecord)!.name, 'links');
      const again = await t.resend.post(base, { subdomain: 'other' });
      assert.equal(again.error?.statusCode, 403);
      assert.match(again.error.message, new RegExp(`links\\.routes\\.test.*PATCH ${base}/${id}`));

      // Verified through DNS like the domain itself; then the tracked links and the pixel use it.
      publishRecords(dns, withRecord);
      assert.deepEqual((await t.resend.post(`${base}/${id}/verify`)).data, { object: 'tracking_domain', id });
      const verified = await eventually(async () => {
        const got = (await t.resend.get<TrackingDomain>(`${base}/${id}`)).data!;
        return got.status === 'verified' && got;
      });
      assert.deepEqual(verified.records, [record('links', 'verified')]);
      const html = await sentHtml('news@routes.test');
      assert.match(html, /<a href="https:\/\/links\.routes\.test\/track\/click\/[^"]+">Shop<\/a>/);
      assert.match(html, /<img src="https:\/\/links\.routes\.test\/track\/open\/[^"]+"/);

      // Another subdomain keeps the id; until its CNAME is verified, the public URL again.
      const changed = await t.resend.patch<TrackingDomain>(`${base}/${id}`, { subdomain: 'go' });
      assert.deepEqual([changed.data!.id, changed.data!.full_name, changed.data!.status], [id, 'go.routes.test', 'pending']);
      assert.match(await sentHtml('news@routes.test'), /<a href="https:\/\/mail\.example\.com\/track\/click\//);

      assert.deepEqual((await t.resend.delete(`${base}/${id}`)).data, { object: 'tracking_domain', id, deleted: true });
      assert.deepEqual((await t.resend.get(base)).data, { object: 'list', has_more: false, data: [] });
      assert.deepEqual((await t.resend.get(`${base}/${id}`)).error, { statusCode: 404, name: 'not_found', message: 'Tracking domain not found' });
      assert.equal(tracking(await domainOf(t, domain!.id)), undefined);

      // A tracking_subdomain set through PATCH /domains is the same tracking domain, with an id of its own.
      await t.resend.domains.update({ id: domain!.id, trackingSubdomain: 'click' });
      const listed = (await t.resend.get<{ data: TrackingDomain[] }>(base)).data!.data;
      assert.deepEqual(listed.map((d) => d.full_name), ['click.routes.test']);
      assert.notEqual(listed[0]!.id, id);
    });

    it('lists no Tracking record without a tracking subdomain', async () => {
      const { data } = await t.resend.domains.create({ name: 'no-links.test', openTracking: true });
      assert.equal(tracking(data as unknown as Domain), undefined);
    });
  });
}
