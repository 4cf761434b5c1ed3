import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, paintedPixels, screenshot, signedIn, watchErrors, withBrowser } from '../support/browser.ts';
import { aggregateXml, gzipped, mailReports, zipped, type ReportInput } from '../support/dmarc-reports.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { dialects, requestJson, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, startInbound } from '../support/inbound.ts';

// A domain's DMARC page in a real browser, its reports mailed through the real inbound SMTP server:
// without a report address, how to set one and the record to copy; the sources over 30 days with
// Mailroom's own told apart (the answer of GET /domains/:id/dmarc), the chart of messages passing and
// failing per day, the reports paged and a report's rows; hostile report values shown as text; and
// another domain's reports kept off the page.

const HOSTNAME = 'mx.mailroom.test';
const OURS = '203.0.113.10';
const STRANGER = '198.51.100.66';
const DAY = 86_400_000;
const SCRIPT = '<script>document.title="pwned"</script>';
/** SCRIPT as XML text: the report's parser decodes it back. */
const SCRIPT_XML = SCRIPT.replaceAll('<', '&lt;').replaceAll('>', '&gt;');

for (const dialect of dialects) {
  describe(`dashboard: a domain's DMARC reports (${dialect})`, withBrowser, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let browser: Browser;
    let page: Page;
    let brand: { id: string };
    let sequence = 0;
    const errors: string[] = [];

    /** A report of the UTC day `daysAgo` days before today. */
    const report = (daysAgo: number, rows: ReportInput['rows'], extra: Partial<ReportInput> = {}): ReportInput => {
      const today = t.clock.now() - (t.clock.now() % DAY);
      return { reportId: `r-${++sequence}`, domain: 'brand.test', begin: today - daysAgo * DAY, end: today - (daysAgo - 1) * DAY - 1000, rows, ...extra };
    };
    const mail = async (to: string, attachments: Parameters<typeof mailReports>[2]) => {
      const answer = await mailReports(inbound.port, to, attachments);
      assert.equal(answer.code, 250, answer.response);
    };

    before(async () => {
      dns = await startDnsServer();
      dns.add(HOSTNAME, { A: [OURS] });
      t = await startApp(dialect, { env: { ...INBOUND_ENV, DNS_SERVERS: dns.address, MAILROOM_HOSTNAME: HOSTNAME, MAILROOM_DNSBL_ZONES: 'none' } });
      inbound = await startInbound(t);
      brand = await receivingDomain(t, 'brand.test');
      browser = await launchBrowser();
      page = watchErrors(await signedIn(browser, t), errors);
    });
    after(async () => {
      await browser?.close();
      await inbound?.close();
      await t?.close();
      await dns?.close();
    });

    it('without a report address, says how to set one with the record to copy; the form sets it, refused without the CSRF token', async () => {
      await page.goto(`/dashboard/domains/${brand.id}`);
      await page.getByRole('link', { name: 'Sources and reports (no report address yet)' }).click();
      await page.waitForURL(`**/dashboard/domains/${brand.id}/dmarc`);
      assert.match(await page.locator('#no-address').innerText(), /No report address/);
      const value = 'v=DMARC1; p=none; rua=mailto:dmarc@brand.test;';
      assert.equal(await page.locator('#dmarc-record dd').nth(0).locator('code').innerText(), '_dmarc.brand.test');
      assert.equal(await page.locator('#dmarc-record dd').nth(2).locator('code').innerText(), value);
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await page.getByRole('button', { name: "Copy the DMARC record's value" }).click();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), value);
      assert.equal(await page.locator('#dmarc-sources tbody').innerText(), 'No report yet.');

      const refused = await page.request.post(`/dashboard/domains/${brand.id}/dmarc`, { form: { _csrf: 'forged', address: 'dmarc@brand.test' }, maxRedirects: 0 });
      assert.equal(refused.status(), 403);
      assert.equal(((await t.resend.domains.get(brand.id)).data as unknown as { dmarc_reports: unknown }).dmarc_reports, null);

      await page.getByRole('button', { name: 'Read reports there' }).click();
      await page.waitForURL(`**/dashboard/domains/${brand.id}/dmarc?done=address`);
      assert.match(await page.getByRole('status').innerText(), /Report address set/);
      assert.equal(await page.locator('#no-address').count(), 0);
      // The record the domain now lists (GET /domains/:id).
      const { data } = await t.resend.domains.get(brand.id);
      const shown = data as unknown as { dmarc_reports: unknown; records: { record: string; value: string }[] };
      assert.deepEqual(shown.dmarc_reports, { address: 'dmarc@brand.test' });
      assert.equal(await page.locator('#dmarc-record dd').nth(2).locator('code').innerText(), shown.records.find((r) => r.record === 'DMARC')!.value);
      assert.deepEqual(errors, []);
    });

    it('shows the sources with ours and not ours, draws passing and failing per day, pages the reports and shows a report\'s rows', async () => {
      const spoof = report(2, [
        { ip: OURS, count: 40, dkimAligned: true, spfAligned: true },
        { ip: STRANGER, count: 7, disposition: 'quarantine' },
        { ip: STRANGER, count: 3, spfAligned: true },
      ]);
      const yesterday = report(1, [{ ip: OURS, count: 5, dkimAligned: true }], { org: 'Yahoo' });
      await mail('dmarc@brand.test', [
        { filename: 'google.com!brand.test.xml.gz', content: gzipped(aggregateXml(spoof)) },
        { filename: 'yahoo.com!brand.test.zip', content: zipped({ 'yahoo.xml': aggregateXml(yesterday) }) },
      ]);
      // 54 more, older, one message each on ten days: more than a page of 50.
      for (let message = 0; message < 3; message++) {
        const files = Object.fromEntries(Array.from({ length: 18 }, (_, i) => [`r${i}.xml`, aggregateXml(report(3 + (i % 10), [{ ip: OURS, count: 1, dkimAligned: true }], { org: `Bulk ${message}` }))]));
        await mail('dmarc@brand.test', [{ filename: `bulk${message}.zip`, content: zipped(files) }]);
      }

      await page.goto(`/dashboard/domains/${brand.id}/dmarc`);
      // The page shows the summary the API gives.
      const api = (await requestJson(t, 'GET', `/domains/${brand.id}/dmarc`)).body;
      const shown = await page.locator('#dmarc-sources tbody tr').evaluateAll((rows) => rows.map((r) => Array.from(r.querySelectorAll('th, td'), (c) => (c as { textContent: string }).textContent.trim())));
      assert.deepEqual(shown, [
        [OURS, 'ours', '99', '40 / 59', '99 / 0', '99 / 0'],
        [STRANGER, 'not ours', '10', '3 / 7', '0 / 10', '3 / 7'],
      ]);
      assert.deepEqual(api.sources.map((s: { source_ip: string; messages: number }) => [s.source_ip, String(s.messages)]), shown.map((r) => [r[0], r[2]]));
      assert.match(await page.locator('#sources + p').innerText(), /^109 messages in 56 reports/);

      const chart = page.locator('#dmarc-chart');
      await chart.locator('canvas').waitFor();
      assert.equal(await chart.getAttribute('data-drawn'), 'true');
      const painted = await paintedPixels(chart);
      assert.ok(painted > 1000, `painted pixels: ${painted}`);
      const labels = (await page.locator('.u-legend .u-series th').allInnerTexts()).map((l) => l.trim()).filter(Boolean);
      assert.deepEqual(labels.slice(1), ['passing', 'failing']);
      const data = JSON.parse((await chart.getAttribute('data-chart'))!);
      assert.equal(data.periods.length, 30);
      assert.equal(new Date(data.periods.at(-1) * 1000).toISOString().slice(0, 10), new Date(t.clock.now()).toISOString().slice(0, 10));
      assert.deepEqual(data.series.passing.slice(-4), [6, 43, 5, 0]);
      assert.deepEqual(data.series.failing.slice(-4), [0, 7, 0, 0]);
      assert.equal(data.series.passing.reduce((a: number, b: number) => a + b, 0), 102);
      await screenshot(page, 'domain-dmarc');

      // Newest first, 50 a page.
      const list = page.locator('#dmarc-reports tbody tr');
      assert.equal(await list.count(), 50);
      assert.match(await list.nth(0).innerText(), /^Bulk 2/);
      await page.getByRole('link', { name: 'Older' }).click();
      await page.waitForURL(/after=/);
      assert.deepEqual((await page.locator('#dmarc-reports tbody th').allInnerTexts()).slice(-2), ['Yahoo', 'google.com']);
      assert.equal(await list.count(), 6);
      await page.getByRole('link', { name: 'Newer' }).click();
      await page.waitForURL(/before=/);
      assert.equal(await list.count(), 50);
      await page.goto(`/dashboard/domains/${brand.id}/dmarc?after=${(await requestJson(t, 'GET', `/dmarc/reports?domain_id=${brand.id}&limit=50`)).body.data[49].id}`);
      await page.getByRole('link', { name: 'google.com' }).click();
      await page.waitForURL(/\/dmarc\/reports\//);
      assert.equal(await page.title(), 'DMARC report from google.com · Mailroom');
      assert.match(await page.locator('#dmarc-report').innerText(), new RegExp(`Report id\\s+${spoof.reportId}\\s`));
      assert.match(await page.locator('#dmarc-report').innerText(), /Policy seen\s+p=none; sp=none; adkim=r; aspf=r; pct=100 for brand\.test/);
      const rows = await page.locator('#dmarc-rows tbody tr').evaluateAll((trs) => trs.map((r) => Array.from(r.querySelectorAll('th, td'), (c) => (c as { textContent: string }).textContent.trim())));
      assert.deepEqual(rows, [
        [OURS, '40', 'none', 'pass', 'pass', 'pass', 'pass', 'brand.test', '', 'DKIM brand.test (s1): pass; SPF send.brand.test (mfrom): pass'],
        [STRANGER, '7', 'quarantine', 'fail', 'fail', 'fail', 'fail', 'brand.test', '', 'DKIM other.example (s1): fail; SPF other.example (mfrom): fail'],
        [STRANGER, '3', 'none', 'fail', 'pass', 'fail', 'pass', 'brand.test', '', 'DKIM other.example (s1): fail; SPF send.brand.test (mfrom): pass'],
      ]);
      await screenshot(page, 'dmarc-report');
      assert.deepEqual(errors, []);
    });

    it('shows hostile values of a report as text, and stores nothing of a report whose source address is a script', async () => {
      const hostile = aggregateXml(report(1, [{ ip: STRANGER, count: 2 }], { org: `Evil ${SCRIPT_XML}`, reportId: `id-${SCRIPT_XML}` }))
        .replace('<header_from>brand.test</header_from>', `<header_from>brand.test${SCRIPT_XML}</header_from><envelope_from>x${SCRIPT_XML}</envelope_from>`)
        .replace('<selector>s1</selector>', `<selector>${SCRIPT_XML}</selector>`);
      await mail('dmarc@brand.test', [{ filename: 'evil.xml', content: hostile }]);
      const badIp = aggregateXml(report(1, [{ ip: `1.2.3.4${SCRIPT_XML}`, count: 1 }], { org: 'Bad IP' }));
      const refused = await mailReports(inbound.port, 'dmarc@brand.test', [{ filename: 'ip.xml', content: badIp }]);
      assert.equal(refused.code, 554);
      assert.match(refused.response, /The DMARC report cannot be read: ip\.xml: <source_ip>/);

      await page.goto(`/dashboard/domains/${brand.id}/dmarc`);
      assert.equal(await page.locator('#dmarc-reports tbody th').first().innerText(), `Evil ${SCRIPT}`);
      assert.equal(await page.getByRole('link', { name: 'Bad IP' }).count(), 0);
      await page.getByRole('link', { name: `Evil ${SCRIPT}` }).click();
      await page.waitForURL(/\/dmarc\/reports\//);
      assert.equal(await page.locator('h1').innerText(), `DMARC report from Evil ${SCRIPT}`);
      assert.match(await page.locator('#dmarc-report').innerText(), new RegExp(`Report id\\s+id-${SCRIPT.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const cells = await page.locator('#dmarc-rows tbody td').allInnerTexts();
      assert.ok(cells.includes(`brand.test${SCRIPT}`), cells.join(' | '));
      assert.ok(cells.includes(`x${SCRIPT}`), cells.join(' | '));
      assert.ok(cells.some((c) => c.includes(`other.example (${SCRIPT}): fail`)), cells.join(' | '));
      assert.equal(await page.locator('main script').count(), 0);
      assert.notEqual(await page.title(), 'pwned');
      assert.deepEqual(errors, []);
    });

    it("keeps another domain's reports off the page, and its report's page under this domain is not found", async () => {
      const other = await receivingDomain(t, 'other-brand.test');
      await requestJson(t, 'PATCH', `/domains/${other.id}`, { dmarc_reports: { address: 'dmarc@other-brand.test' } });
      const elsewhere = report(1, [{ ip: '192.0.2.99', count: 11 }], { domain: 'other-brand.test', org: 'Other reporter' });
      await mail('dmarc@other-brand.test', [{ filename: 'other.xml', content: aggregateXml(elsewhere) }]);
      const before = await page.goto(`/dashboard/domains/${brand.id}/dmarc`);
      assert.equal(before!.status(), 200);
      assert.equal(await page.getByText('192.0.2.99').count(), 0);
      assert.equal(await page.getByRole('link', { name: 'Other reporter' }).count(), 0);

      await page.goto(`/dashboard/domains/${other.id}/dmarc`);
      assert.deepEqual(await page.locator('#dmarc-sources tbody th').allInnerTexts(), ['192.0.2.99']);
      const href = (await page.getByRole('link', { name: 'Other reporter' }).getAttribute('href'))!;
      const reportId = href.split('/').at(-1)!;
      const crossed = await page.goto(`/dashboard/domains/${brand.id}/dmarc/reports/${reportId}`);
      assert.equal(crossed!.status(), 404);
      assert.match(await page.locator('main').innerText(), /DMARC report not found/);
      assert.equal((await page.goto(`/dashboard/domains/${brand.id}/dmarc/reports/not-an-id`))!.status(), 404);
    });
  });
}
