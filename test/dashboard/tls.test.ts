import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { scheduleTlsReports } from '../../src/domain/tls-reports/send-reports.ts';
import { launchBrowser, screenshot, signedIn, watchErrors, withBrowser } from '../support/browser.ts';
import { startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { HOSTNAME, verifiedDomain } from '../support/domain-setup.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { publishRecipients, stsPolicy } from '../support/mta-sts.ts';
import { createTestCa, type TestCa } from '../support/test-ca.ts';

// The TLS page in a real browser, its counts from real direct deliveries under MTA-STS policies (as in
// test/delivery/mta-sts.test.ts): an HTTPS server with a test CA's certificate serving the policies, a
// DNS server, and MX hosts whose certificate names them or not. good.test (enforce) delivers over TLS;
// testing.test (testing) delivers to a host whose certificate names another: a failure counted. The
// next day's TLS reports: none asked for by good.test, one mailed for testing.test.

const DAY = 86_400_000;

for (const dialect of dialects) {
  describe(`dashboard: TLS to recipients (${dialect})`, withBrowser, () => {
    let dns: TestDnsServer;
    let ca: TestCa;
    let plainMx: TestSmtpServer;
    let goodMx: TestSmtpServer;
    let wrongMx: TestSmtpServer;
    let https: Server;
    let t: TestApp;
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];

    before(async () => {
      dns = await startDnsServer();
      ca = await createTestCa();
      plainMx = await startSmtpServer();
      goodMx = await startSmtpServer({ disabledCommands: [], ...(await ca.issue(['mx.good.test'])) }, { host: '127.0.0.4', port: plainMx.port });
      wrongMx = await startSmtpServer({ disabledCommands: [], ...(await ca.issue(['wrong.example'])) }, { host: '127.0.0.5', port: plainMx.port });
      const policies = new Map([
        ['mta-sts.good.test', stsPolicy('enforce', 'mx.good.test')],
        ['mta-sts.testing.test', stsPolicy('testing', 'mx.testing.test')],
      ]);
      https = createServer(await ca.issue([...policies.keys()]), (request, response) => {
        const text = request.url === '/.well-known/mta-sts.txt' ? policies.get((request.headers.host ?? '').replace(/:\d+$/, '')) : undefined;
        if (text === undefined) return void response.writeHead(404).end();
        response.writeHead(200, { 'content-type': 'text/plain' }).end(text);
      });
      await new Promise<void>((resolve) => https.listen(0, '127.0.0.1', resolve));
      dns.add(HOSTNAME, { A: ['127.0.0.1'] });
      publishRecipients(
        dns,
        [
          ['good.test', 'mx.good.test', '127.0.0.4'],
          ['testing.test', 'mx.testing.test', '127.0.0.5'],
          ['reports.test', 'mx.reports.test', '127.0.0.1'],
        ],
        ['reports.test'],
      );
      dns.add('_smtp._tls.testing.test', { TXT: ['v=TLSRPTv1; rua=mailto:tls@reports.test'] });
      t = await startApp(dialect, {
        env: {
          DELIVERY_MODE: 'direct',
          DIRECT_SMTP_PORT: String(plainMx.port),
          DNS_SERVERS: dns.address,
          MAILROOM_HOSTNAME: HOSTNAME,
          MAILROOM_MTA_STS_PORT: String((https.address() as AddressInfo).port),
          MAILROOM_OUTBOUND_CA: ca.caFile,
          MAILROOM_ALLOW_PRIVATE_TLS_HOSTS: 'true',
          MAILROOM_TLSRPT_FROM: 'tls-reports@sender.test',
        },
      });
      await verifiedDomain(t, dns, 'sender.test');
      browser = await launchBrowser();
      page = watchErrors(await signedIn(browser, t), errors);
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      https?.closeAllConnections();
      await new Promise<void>((resolve) => (https ? https.close(() => resolve()) : resolve()));
      await Promise.all([plainMx?.close(), goodMx?.close(), wrongMx?.close(), dns?.close()]);
      ca?.close();
    });

    const delivered = async (to: string) => {
      const { data } = await t.resend.emails.send({ from: 'hello@sender.test', to, subject: 'Hello', text: 'Hello' });
      await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered' || undefined, 30_000);
    };

    it('shows no session before any delivery', async () => {
      await page.goto('/dashboard/emails');
      await page.getByRole('link', { name: 'TLS', exact: true }).click();
      await page.waitForURL('**/dashboard/tls');
      assert.equal(await page.locator('#tls-domains tbody').innerText(), 'No session counted.');
      assert.equal(await page.locator('#not-counting').count(), 0);
    });

    it("shows each recipient domain's sessions, failures by type, policy mode, and each day's report", async () => {
      await delivered('a@good.test');
      await delivered('b@good.test');
      await delivered('c@testing.test');
      await t.ctx.tlsSessions.flush();
      const today = new Date(t.clock.now()).toISOString().slice(0, 10);

      await page.goto('/dashboard/tls');
      const cells = (table: string) =>
        page.locator(`${table} tbody tr`).evaluateAll((trs) => trs.map((r) => Array.from(r.querySelectorAll('th, td'), (c) => (c as { textContent: string }).textContent.trim())));
      const rows = () => cells('#tls-domains');
      const shown = await rows();
      assert.deepEqual(
        shown.map((r) => [r[0], r[1]!.split(' ')[0], r[2], r[3], r[4], r[5]]),
        [
          ['good.test', 'enforce', '2', '0', '', '0 of 1'],
          ['testing.test', 'testing', '0', '1', 'certificate-host-mismatch: 1', '0 of 1'],
        ],
      );
      assert.deepEqual(await cells('#tls-testing\\.test'), [[today, '0', '1', 'not yet']]);

      // The next day: the day's reports are made, mailed to testing.test's address; good.test asks for none.
      t.advance(DAY);
      await scheduleTlsReports(t.ctx);
      await eventually(() => plainMx.messages.find((m) => m.to[0] === 'tls@reports.test'), 30_000);
      await eventually(async () => (await t.ctx.db.selectFrom('tls_reports').select('domain').where('day', '=', today).execute()).length === 2 || undefined);
      // A day later the session has ended: sign in again.
      await page.context().close();
      page = watchErrors(await signedIn(browser, t), errors);
      await page.goto('/dashboard/tls');
      assert.deepEqual((await rows()).map((r) => r[5]), ['1 of 1', '1 of 1']);
      const [day] = await cells('#tls-testing\\.test');
      assert.deepEqual(day!.slice(0, 3), [today, '0', '1']);
      assert.match(day![3]!, /^sent \S+ \S+ to mailto:tls@reports\.test$/);
      assert.deepEqual(await cells('#tls-good\\.test'), [[today, '2', '0', 'none: the domain asks for no report']]);
      await page.locator('#tls-testing\\.test summary').click();
      await screenshot(page, 'tls');
      assert.deepEqual(errors, []);
    });
  });
}
