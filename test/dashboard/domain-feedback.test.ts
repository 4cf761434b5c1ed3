import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { basicAuth, POSTMARK_AUTH } from '../support/providers.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// A domain's page says which feedback source last reported on its mail, and when: here Postmark,
// whose relay (a real SMTP server) named the message and whose webhook then reported a bounce.

for (const dialect of dialects) {
  describe(`dashboard: a domain's last feedback (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let relay: TestSmtpServer;
    let browser: Browser;
    let page: Page;
    const relayIds = new Map<string, string>();

    before(async () => {
      relay = await startSmtpServer();
      relay.answer = (message) => {
        const id = randomUUID();
        for (const address of message.to) relayIds.set(address, id);
        return `Ok: queued as ${id}`;
      };
      t = await startApp(dialect, { env: { SMTP_URL: relay.url, FEEDBACK_POSTMARK_AUTH: POSTMARK_AUTH } });
      browser = await launchBrowser();
      page = await signedIn(browser, t);
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      await relay?.close();
    });

    it('shows none before a report, then the source and its time', async () => {
      const { data: domain } = await t.resend.domains.create({ name: 'feedback.test' });
      await page.goto(`/dashboard/domains/${domain!.id}`);
      assert.match(await page.locator('dl.facts').innerText(), /Last feedback\s+none yet/);

      const { data: sent } = await t.resend.emails.send({ from: 'news@feedback.test', to: 'gone@example.com', subject: 'Hello', text: 'Hi' });
      await eventually(async () => (await t.resend.emails.get(sent!.id)).data?.last_event === 'delivered' || undefined);
      const bounce = { RecordType: 'Bounce', ID: 7, Type: 'HardBounce', TypeCode: 1, MessageID: relayIds.get('gone@example.com'), Email: 'gone@example.com', Details: 'smtp;550 5.1.1 no such user' };
      const response = await fetch(`${t.url}/feedback/postmark`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: basicAuth(POSTMARK_AUTH) }, body: JSON.stringify(bounce) });
      assert.equal(((await response.json()) as { recorded: number }).recorded, 1);

      await page.reload();
      const facts = await page.locator('dl.facts').innerText();
      assert.match(facts, /Last feedback\s+Postmark, \d{4}-\d{2}-\d{2}/);
      assert.ok(await page.locator('dl.facts time').last().getAttribute('datetime'));
      await screenshot(page, 'domain-feedback');
    });
  });
}
