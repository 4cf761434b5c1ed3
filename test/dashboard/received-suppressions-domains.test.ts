import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { domainOf, statusBecomes } from '../support/domain-setup.ts';
import { dialects, followLink, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';

// The received emails, suppressions and domains pages in a real browser, over a real app whose inbound
// SMTP server and domain checks ask a real DNS server.

for (const dialect of dialects) {
  describe(`dashboard: received, suppressions, domains (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let dns: TestDnsServer;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let browser: Browser;
    let page: Page;

    before(async () => {
      dns = await startDnsServer();
      // The sender's SPF allows the test's address and its DMARC policy exists: SPF and DMARC pass, DKIM is none.
      dns.add('sender.test', { TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
      dns.add('_dmarc.sender.test', { TXT: ['v=DMARC1; p=reject'] });
      t = await startApp(dialect, { env: { ...INBOUND_ENV, DNS_SERVERS: dns.address } });
      inbound = await startInbound(t);
      await receivingDomain(t, 'inbox.test');
      browser = await launchBrowser();
      page = await signedIn(browser, t);
    });
    after(async () => {
      await browser?.close();
      await inbound?.close();
      await t?.close();
      await dns?.close();
    });

    it('lists a received message; its detail shows the authentication results, the html sandboxed, headers, attachments and the source', async () => {
      const notes = 'line one\r\nline two\r\n';
      const sent = await sendTo(inbound.port, {
        envelope: { from: 'ada@sender.test', to: ['support@inbox.test'] },
        from: 'Ada <ada@sender.test>',
        to: 'Support <support@inbox.test>',
        cc: 'copy@elsewhere.test',
        subject: 'Invoice <b>42</b>',
        text: 'See the attached notes.',
        html: '<p id="greeting">Hello <b>there</b></p><script>parent.document.title = "scripted"</script>',
        headers: { 'X-Custom': 'custom value' },
        attachments: [{ filename: 'notes.txt', content: notes, contentType: 'text/plain' }],
      });
      const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;

      await page.goto('/dashboard/received');
      // The subject's markup is shown as text, not rendered.
      const link = page.getByRole('link', { name: 'Invoice <b>42</b>' });
      assert.equal(await link.getAttribute('href'), `/dashboard/received/${id}`);
      assert.match(await page.locator('table.list tbody tr').first().innerText(), /ada@sender\.test\s+support@inbox\.test\s+1/);
      await screenshot(page, 'received-list');

      await link.click();
      await page.waitForURL(`**/dashboard/received/${id}`);
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Invoice <b>42</b>');
      const facts = await page.locator('dl.facts').first().innerText();
      assert.match(facts, /From\s+ada@sender\.test/);
      assert.match(facts, /Cc\s+copy@elsewhere\.test/);
      assert.match(facts, /Received for\s+support@inbox\.test/);
      assert.match(await page.locator('dl.auth').innerText(), /SPF\s+pass\s+DKIM\s+none\s+DMARC\s+pass/);

      const frame = page.locator('iframe.message');
      assert.equal(await frame.getAttribute('sandbox'), '');
      assert.equal(await frame.getAttribute('src'), `/dashboard/received/${id}/html`);
      assert.equal(await page.frameLocator('iframe.message').locator('#greeting').innerText(), 'Hello there');
      assert.notEqual(await page.title(), 'scripted', 'no script runs in the message');

      assert.match(await page.locator('pre.text').innerText(), /See the attached notes\./);
      assert.equal(await page.locator('table.headers tr', { hasText: 'x-custom' }).locator('td').nth(1).innerText(), 'custom value');
      const download = await page.getByRole('link', { name: 'notes.txt' }).getAttribute('href');
      assert.equal(await (await followLink(t, download!)).text(), notes);
      assert.match(await page.locator('pre.source').innerText(), /Subject: Invoice <b>42<\/b>/);
      const raw = await page.request.get(`/dashboard/received/${id}/raw`);
      assert.equal(raw.headers()['content-type'], 'message/rfc822');
      assert.match(raw.headers()['content-disposition']!, new RegExp(`attachment; filename="${id}\\.eml"`));
      assert.match(await raw.text(), /X-Custom: custom value/);
      await screenshot(page, 'received-detail');
    });

    it('adds an address to the suppression list, filters by origin, and removes it after asking', async () => {
      const listed = async () => ((await (await t.fetch('/suppressions')).json()) as { data: { email: string; origin: string }[] }).data;
      await page.goto('/dashboard/suppressions');
      await page.getByLabel('Address to suppress').fill('Blocked@Example.com');
      await page.getByRole('button', { name: 'Add' }).click();
      await page.waitForURL('**/dashboard/suppressions?done=added');
      assert.match(await page.locator('.notice').innerText(), /on the list/);
      assert.deepEqual((await listed()).map(({ email, origin }) => ({ email, origin })), [{ email: 'blocked@example.com', origin: 'manual' }]);
      assert.match(await page.locator('table.list tbody').innerText(), /blocked@example\.com\s+manual/);
      await screenshot(page, 'suppressions');

      await page.getByLabel('Origin').selectOption('bounce');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL('**/dashboard/suppressions?origin=bounce');
      assert.equal(await page.locator('table.list tbody').innerText(), 'No suppressed addresses.');
      await page.getByRole('link', { name: 'Clear' }).click();

      // Dismissing the question keeps the entry; accepting it removes the entry.
      page.once('dialog', (dialog) => void dialog.dismiss());
      await page.getByRole('button', { name: 'Remove blocked@example.com' }).click();
      assert.equal((await listed()).length, 1);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Remove blocked@example.com' }).click();
      await page.waitForURL('**/dashboard/suppressions?done=removed');
      assert.deepEqual(await listed(), []);
      assert.equal(await page.locator('table.list tbody').innerText(), 'No suppressed addresses.');
    });

    it("lists domains with their status; a domain's records have copy buttons and Verify checks them", async () => {
      const { data, error } = await t.resend.domains.create({ name: 'example.test' });
      assert.equal(error, null);
      const domain = await domainOf(t, data.id);

      await page.goto('/dashboard/domains');
      const row = page.locator('table.list tbody tr', { hasText: 'example.test' });
      assert.match(await row.innerText(), /example\.test\s+not started\s+sending/);
      assert.match(await page.locator('table.list tbody tr', { hasText: 'inbox.test' }).innerText(), /receiving/);
      await screenshot(page, 'domains');

      await row.getByRole('link', { name: 'example.test' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}`);
      const rows = page.locator('table.records tbody tr');
      assert.equal(await rows.count(), domain.records.length);
      for (const [i, record] of domain.records.entries()) {
        const cells = await rows.nth(i).locator('td').allInnerTexts();
        assert.deepEqual(cells.slice(0, 3), [record.record, record.type, record.name]);
        assert.equal(await rows.nth(i).locator('code.record-value').innerText(), record.value);
        assert.equal(await rows.nth(i).locator('button[data-copy]').getAttribute('data-copy'), record.value);
      }
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      const dkim = domain.records.find((r) => r.record === 'DKIM')!;
      await rows.filter({ hasText: 'DKIM' }).getByRole('button', { name: 'Copy' }).click();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), dkim.value);

      publishRecords(dns, domain);
      await page.getByRole('button', { name: 'Verify' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}?done=verifying`);
      assert.match(await page.locator('.notice').innerText(), /Looking the records up now/);
      await statusBecomes(t, domain.id, 'verified');
      await page.reload();
      assert.match(await page.locator('dl.facts').innerText(), /Status\s+verified/);
      assert.match(await rows.filter({ hasText: 'DKIM' }).innerText(), /verified\s*$/);
      await screenshot(page, 'domain-detail');
    });

    it('adds a domain from the form and refuses a name that is not a domain', async () => {
      await page.goto('/dashboard/domains');
      await page.getByLabel('Domain name').fill('made-here.test');
      await page.getByLabel('Receives mail too').check();
      await page.getByRole('button', { name: 'Add domain' }).click();
      await page.waitForURL(/\/dashboard\/domains\/[0-9a-f-]{36}\?done=created$/);
      const id = /domains\/([0-9a-f-]{36})/.exec(page.url())![1]!;
      const created = await domainOf(t, id);
      assert.equal(created.name, 'made-here.test');
      assert.ok(created.records.some((r) => r.record === 'Receiving'));
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'made-here.test');

      await page.goto('/dashboard/domains');
      await page.getByLabel('Domain name').fill('not a domain');
      const [response] = await Promise.all([page.waitForResponse('**/dashboard/domains'), page.getByRole('button', { name: 'Add domain' }).click()]);
      assert.equal(response.status(), 422);
      assert.match(await page.locator('main').innerText(), /not a domain name/);
    });
  });
}
