import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type Mail from 'nodemailer/lib/mailer';
import { dialects, eventually, requestJson, rowCount, startApp, type TestApp } from '../../support/harness.ts';
import { INBOUND_ENV, receivingDomain, startInbound } from '../../support/inbound.ts';
import { startDnsServer, type TestDnsServer } from '../../support/dns-server.ts';
import { aggregateXml, billionLaughs, externalEntity, gzipped, lyingGzipBomb, mailReports, manyRows, zipped, type ReportInput } from '../../support/dmarc-reports.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.ts';

// DMARC aggregate reports mailed to a domain's report address through the real inbound SMTP server
// (nodemailer as the reporter), read through the API with the key, summed by source with Mailroom's
// own addresses told apart; the hostile kinds refused or ignored, the server answering after each.

const HOSTNAME = 'mx.mailroom.test';
const OURS = '203.0.113.10';
const STRANGER = '198.51.100.66';
const DAY = 86_400_000;

for (const dialect of dialects) {
  describe(`DMARC aggregate reports by mail (${dialect})`, () => {
    let dns: TestDnsServer;
    let receiver: WebhookReceiver;
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let domain: { id: string };
    let sequence = 0;

    const report = (rows: ReportInput['rows'], extra: Partial<ReportInput> = {}): ReportInput => ({
      reportId: `r-${++sequence}`,
      domain: 'brand.test',
      begin: t.clock.now() - 2 * DAY,
      end: t.clock.now() - DAY,
      rows,
      ...extra,
    });
    /** Mails `attachments` to the report address as a reporter does; the server's answer, or its refusal. */
    const mail = (attachments: Mail.Attachment[], to = 'dmarc@brand.test') => mailReports(inbound.port, to, attachments);
    const stored = async () => (await requestJson(t, 'GET', `/dmarc/reports?domain_id=${domain.id}&limit=100`)).body.data as { id: string; report_id: string }[];

    before(async () => {
      dns = await startDnsServer();
      dns.add(HOSTNAME, { A: [OURS] });
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, {
        env: { ...INBOUND_ENV, DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, MAILROOM_DNSBL_ZONES: 'none', MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
      });
      inbound = await startInbound(t);
      domain = await receivingDomain(t, 'brand.test');
      await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: { address: 'dmarc@brand.test' } });
      await t.resend.webhooks.create({ endpoint: receiver.url, events: ['domain.dmarc_report', 'email.received'] as never });
    });
    after(async () => {
      await inbound.close();
      await t.close();
      await receiver.close();
      await dns.close();
    });

    it('takes a report address only on a domain that receives, at it or another receiving domain, and suggests it as rua', async () => {
      const { data: sendingOnly } = await t.resend.domains.create({ name: 'sends-only.test' });
      let answer = await requestJson(t, 'PATCH', `/domains/${sendingOnly!.id}`, { dmarc_reports: { address: 'dmarc@sends-only.test' } });
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.name, 'validation_error');
      assert.match(answer.body.message, /enable `capabilities\.receiving` first/);
      answer = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: { address: 'dmarc@elsewhere.test' } });
      assert.equal(answer.status, 422);
      assert.match(answer.body.message, /must be at brand\.test or at another of your domains that receives mail here/);
      answer = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: { address: 'not an address' } });
      assert.equal(answer.status, 422);

      answer = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: null });
      assert.equal(((await t.resend.domains.get(domain.id)).data as unknown as { dmarc_reports: unknown }).dmarc_reports, null);
      answer = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { dmarc_reports: { address: 'DMARC@brand.test' } });
      assert.equal(answer.status, 200, JSON.stringify(answer.body));
      const { data } = await t.resend.domains.get(domain.id);
      const shown = data as unknown as { dmarc_reports: unknown; records: { record: string; name: string; type: string; value: string }[] };
      assert.deepEqual(shown.dmarc_reports, { address: 'dmarc@brand.test' });
      assert.equal(shown.records.find((r) => r.record === 'DMARC')?.value, 'v=DMARC1; p=none; rua=mailto:dmarc@brand.test;');
      assert.equal(shown.records.find((r) => r.record === 'TLS-RPT')?.value, 'v=TLSRPTv1; rua=mailto:dmarc@brand.test');
      // Receiving cannot be turned off under it.
      answer = await requestJson(t, 'PATCH', `/domains/${domain.id}`, { capabilities: { receiving: 'disabled' } });
      assert.equal(answer.status, 422);
      assert.match(answer.body.message, /set `dmarc_reports` to null/);
    });

    it('stores reports as XML, .xml.gz and .zip, several in one message, each once; reads them with their rows', async () => {
      const plain = report([{ ip: OURS, count: 10, dkimAligned: true, spfAligned: true }]);
      const gz = report([{ ip: OURS, count: 5, dkimAligned: true }], { org: 'Yahoo' });
      const zip = report([{ ip: '2001:db8::1', count: 2, spfAligned: true }], { org: 'Mail.Ru' });
      assert.equal((await mail([{ filename: 'google.com!brand.test!1!2.xml', content: aggregateXml(plain), contentType: 'text/xml' }])).code, 250);
      const answer = await mail([
        { filename: 'yahoo.com!brand.test!1!2.xml.gz', content: gzipped(aggregateXml(gz)), contentType: 'application/gzip' },
        { filename: 'mail.ru!brand.test!1!2.zip', content: zipped({ 'mail.ru!brand.test!1!2.xml': aggregateXml(zip) }), contentType: 'application/zip' },
      ]);
      assert.equal(answer.code, 250, answer.response);
      assert.deepEqual((await stored()).map((r) => r.report_id).sort(), [plain.reportId, gz.reportId, zip.reportId].sort());

      // A resent report is the same report.
      assert.equal((await mail([{ filename: 'again.xml.gz', content: gzipped(aggregateXml(gz)), contentType: 'application/gzip' }])).code, 250);
      assert.equal((await stored()).length, 3);
      assert.equal(await rowCount(t, 'received_emails'), 0, 'a report is not kept as received mail');

      const id = (await stored()).find((r) => r.report_id === zip.reportId)!.id;
      const { status, body } = await requestJson(t, 'GET', `/dmarc/reports/${id}`);
      assert.equal(status, 200);
      assert.equal(body.object, 'dmarc_report');
      assert.equal(body.org_name, 'Mail.Ru');
      assert.equal(body.domain_id, domain.id);
      assert.deepEqual(body.policy, { p: 'none', sp: 'none', adkim: 'r', aspf: 'r', pct: 100 });
      assert.equal(body.messages, 2);
      assert.deepEqual(body.rows, [
        {
          source_ip: '2001:db8::1',
          count: 2,
          disposition: 'none',
          dkim: 'fail',
          spf: 'pass',
          dkim_aligned: 'fail',
          spf_aligned: 'pass',
          header_from: 'brand.test',
          envelope_from: null,
          auth_results: { dkim: [{ domain: 'other.example', selector: 's1', result: 'fail' }], spf: [{ domain: 'send.brand.test', scope: 'mfrom', result: 'pass' }] },
        },
      ]);
      assert.equal((await requestJson(t, 'GET', '/dmarc/reports/01a2007a-0000-7000-8000-000000000000')).status, 404);
    });

    it('pages and filters the list by domain and date', async () => {
      const other = await receivingDomain(t, 'other-brand.test');
      await requestJson(t, 'PATCH', `/domains/${other.id}`, { dmarc_reports: { address: 'dmarc@brand.test' } });
      const old = report([{ ip: OURS, count: 1, dkimAligned: true }], { domain: 'other-brand.test', begin: Date.parse('2025-01-01T00:00:00Z'), end: Date.parse('2025-01-02T00:00:00Z') });
      assert.equal((await mail([{ filename: 'old.xml', content: aggregateXml(old) }])).code, 250);
      const all = (await requestJson(t, 'GET', '/dmarc/reports?limit=100')).body.data as { id: string; domain: string }[];
      assert.ok(all.length >= 4);
      const ofOther = (await requestJson(t, 'GET', `/dmarc/reports?domain_id=${other.id}`)).body;
      assert.deepEqual(ofOther.data.map((r: { report_id: string }) => r.report_id), [old.reportId]);
      const january = (await requestJson(t, 'GET', '/dmarc/reports?from=2025-01-01&to=2025-01-31')).body;
      assert.deepEqual(january.data.map((r: { report_id: string }) => r.report_id), [old.reportId]);
      const page = (await requestJson(t, 'GET', '/dmarc/reports?limit=2')).body;
      assert.equal(page.has_more, true);
      const next = (await requestJson(t, 'GET', `/dmarc/reports?limit=100&after=${page.data[1].id}`)).body;
      assert.deepEqual([...page.data, ...next.data].map((r: { id: string }) => r.id), all.map((r) => r.id));
      const bad = await requestJson(t, 'GET', '/dmarc/reports?from=yesterday');
      assert.equal(bad.status, 422);
      assert.match(bad.body.message, /`from`/);
      await requestJson(t, 'PATCH', `/domains/${other.id}`, { dmarc_reports: null });
    });

    it("sums a domain's sources with Mailroom's own told apart; a stranger failing DMARC warns and emits domain.dmarc_report", async () => {
      const spoof = report([
        { ip: OURS, count: 40, dkimAligned: true, spfAligned: true },
        { ip: STRANGER, count: 7, disposition: 'quarantine' },
        { ip: STRANGER, count: 3, spfAligned: true },
      ]);
      assert.equal((await mail([{ filename: 'spoof.xml.gz', content: gzipped(aggregateXml(spoof)) }])).code, 250);

      const { status, body } = await requestJson(t, 'GET', `/domains/${domain.id}/dmarc`);
      assert.equal(status, 200, JSON.stringify(body));
      assert.equal(body.object, 'dmarc_summary');
      const byIp = Object.fromEntries(body.sources.map((s: { source_ip: string }) => [s.source_ip, s]));
      assert.deepEqual(byIp[STRANGER], { source_ip: STRANGER, ours: false, messages: 10, spf: { pass: 3, fail: 7 }, dkim: { pass: 0, fail: 10 }, alignment: { pass: 3, fail: 7 } });
      assert.equal(byIp[OURS].ours, true);
      assert.equal(byIp['2001:db8::1'].ours, false);
      assert.ok(byIp[OURS].messages >= 40 + 10 + 5);
      // A period with no report.
      const empty = (await requestJson(t, 'GET', `/domains/${domain.id}/dmarc?from=2020-01-01&to=2020-02-01`)).body;
      assert.deepEqual([empty.reports, empty.messages, empty.sources], [0, 0, []]);

      const hook = await eventually(() => receiver.received.find((h) => h.payload.type === 'domain.dmarc_report' && h.payload.data.report.report_id === spoof.reportId));
      assert.equal(hook.payload.data.domain_id, domain.id);
      assert.equal(hook.payload.data.messages, 50);
      assert.deepEqual(hook.payload.data.sources.map((s: { source_ip: string; ours: boolean }) => [s.source_ip, s.ours]), [[OURS, true], [STRANGER, false]]);

      const check = (await requestJson(t, 'POST', `/domains/${domain.id}/deliverability`)).body.checks.find((c: { id: string }) => c.id === 'dmarc_reports');
      assert.equal(check.status, 'warn', JSON.stringify(check));
      assert.match(check.detail, new RegExp(`not Mailroom's: .*${STRANGER.replace(/\./g, '\\.')} \\(7 of 10 messages\\)`));
      assert.match(check.fix, /authorize it in SPF/);
    });

    it('refuses or ignores the hostile kinds, resolves no external entity, and answers the next report', async () => {
      const before = (await stored()).length;
      let fetched = 0;
      const server = createServer((_request, response) => {
        fetched++;
        response.end('owned');
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const entityUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/secret`;
      const hostile: [string, Mail.Attachment, RegExp][] = [
        ['a gzip bomb whose trailer lies', { filename: 'bomb.xml.gz', content: lyingGzipBomb(64 * 1024 * 1024) }, /: the gzip file inflates to more than 16777216 bytes/],
        ['a zip bomb', { filename: 'bomb.zip', content: zipped({ 'bomb.xml': new Uint8Array(64 * 1024 * 1024) }) }, /bomb.xml declares 67108864 bytes/],
        ['the billion laughs', { filename: 'lol.xml', content: billionLaughs('brand.test') }, /declares a DTD or entities/],
        ['an external entity', { filename: 'xxe.xml', content: externalEntity(entityUrl, report([{ ip: STRANGER, count: 1 }])) }, /declares a DTD or entities/],
        ['100,000 rows', { filename: 'rows.xml.gz', content: gzipped(manyRows(report([]), 100_000)) }, /100000 records, over 20000/],
        ['malformed XML', { filename: 'broken.xml', content: '<feedback><report_metadata><org_name>x</feedback>' }, /malformed XML/],
      ];
      try {
        for (const [what, attachment, reason] of hostile) {
          const answer = await mail([attachment]);
          assert.equal(answer.code, 554, `${what}: ${answer.response}`);
          assert.match(answer.response, /5\.6\.0 The DMARC report cannot be read/, what);
          assert.match(answer.response, reason, what);
        }
        assert.equal(fetched, 0, 'the external entity was never fetched');
      } finally {
        server.close();
      }
      // A report for a domain that is not ours is accepted and ignored.
      const foreign = report([{ ip: STRANGER, count: 1 }], { domain: 'not-ours.test' });
      assert.equal((await mail([{ filename: 'foreign.xml', content: aggregateXml(foreign) }])).code, 250);
      assert.equal((await stored()).length, before);
      assert.equal((await requestJson(t, 'GET', `/dmarc/reports?limit=100`)).body.data.some((r: { domain: string }) => r.domain === 'not-ours.test'), false);

      const good = report([{ ip: OURS, count: 1, dkimAligned: true }]);
      assert.equal((await mail([{ filename: 'good.xml', content: aggregateXml(good) }])).code, 250);
      assert.equal((await stored()).length, before + 1);
    });

    it('keeps mail to the report address that holds no report as received mail', async () => {
      const answer = await mail([]);
      assert.equal(answer.code, 250);
      await eventually(() => receiver.received.find((h) => h.payload.type === 'email.received' && h.payload.data.received_for.includes('dmarc@brand.test')));
    });

    it('refuses the DMARC routes to a sending-access key', async () => {
      const { data } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      for (const path of ['/dmarc/reports', `/domains/${domain.id}/dmarc`]) {
        const response = await fetch(`${t.url}${path}`, { headers: { authorization: `Bearer ${data!.token}` } });
        assert.equal(response.status, 401);
        assert.equal(((await response.json()) as { name: string }).name, 'restricted_api_key');
      }
    });
  });
}
