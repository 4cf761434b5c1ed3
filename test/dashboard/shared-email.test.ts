import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, withBrowser } from '../support/browser.ts';
import { dialects, followLink, startApp, type TestApp } from '../support/harness.ts';
import { INBOUND_ENV, receivingDomain, sendTo, startInbound } from '../support/inbound.ts';

// The page a share link opens (POST /emails/:id/share), in a real browser with no session: the email
// shown read-only and escaped, its html sandboxed, nothing of the dashboard around it.

const HOUR = 3600_000;

for (const dialect of dialects) {
  describe(`the shared email page (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let inbound: Awaited<ReturnType<typeof startInbound>>;
    let browser: Browser;

    /** A browser page of its own (no cookies, no session) at a share link. */
    async function visit(url: string, errors: string[] = []): Promise<Page> {
      const context = await browser.newContext({ baseURL: t.url, viewport: { width: 1280, height: 900 } });
      const page = await context.newPage();
      // Anything the page's policy refuses (a script, an inline style) is reported here.
      page.on('console', (message) => void (/Content Security Policy/i.test(message.text()) && errors.push(message.text())));
      const response = await page.goto(url.slice(t.ctx.config.publicUrl.length));
      assert.ok(response, url);
      return page;
    }

    before(async () => {
      t = await startApp(dialect, { env: INBOUND_ENV });
      inbound = await startInbound(t);
      await receivingDomain(t, 'inbox.test');
      browser = await launchBrowser();
    });
    after(async () => {
      await browser?.close();
      await inbound?.close();
      await t?.close();
    });

    it('shows a sent email to anyone with the link: the subject as text, the html sandboxed and its script not run, no dashboard around it', async () => {
      const errors: string[] = [];
      const subject = '<script>document.title = "scripted"</script>Your <b>receipt</b>';
      const { data: email } = await t.resend.emails.send({
        from: 'Acme <billing@example.com>',
        to: 'ada@example.org',
        cc: 'accounts@example.org',
        bcc: 'audit@example.org',
        subject,
        html: '<p id="greeting">Hello Ada</p><script>document.body.dataset.ran = "yes"</script>',
        text: 'Hello Ada, in text',
        attachments: [{ filename: 'receipt.txt', content: Buffer.from('paid in full').toString('base64') }],
      });
      const { data } = await t.resend.emails.share(email!.id, { expiresIn: '2 hours' });
      const page = await visit(data!.url, errors);

      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), subject, 'the subject is text');
      assert.equal(await page.title(), `${subject} · Mailroom`);
      assert.equal(await page.locator('script').count(), 0, 'nothing of the subject became a script, and the page loads none');
      const facts = await page.locator('dl.facts').innerText();
      assert.match(facts, /From\s+Acme <billing@example\.com>/);
      assert.match(facts, /To\s+ada@example\.org/);
      assert.match(facts, /Cc\s+accounts@example\.org/);
      assert.doesNotMatch(await page.locator('main').innerText(), /audit@example\.org/, 'Bcc is not shown');

      const frame = page.locator('iframe.message');
      assert.equal(await frame.getAttribute('sandbox'), '');
      const inner = page.frameLocator('iframe.message');
      assert.equal(await inner.locator('#greeting').textContent(), 'Hello Ada');
      assert.equal(await inner.locator('body').getAttribute('data-ran'), null, 'the script in the email did not run');
      assert.match(await page.locator('pre.text').innerText(), /Hello Ada, in text/);

      // Nothing of the account: no navigation, no sign-out, no link into the dashboard, no actions, no timeline.
      assert.equal(await page.locator('nav').count(), 0);
      assert.equal(await page.locator('form, button').count(), 0);
      assert.equal(await page.locator('a[href^="/dashboard"]').count(), 0);
      assert.equal(await page.getByRole('heading', { name: 'Timeline' }).count(), 0);

      const download = await page.getByRole('link', { name: 'receipt.txt' }).getAttribute('href');
      assert.equal(await (await followLink(t, download!)).text(), 'paid in full');
      assert.deepEqual(errors, [], 'the page loads nothing its policy refuses');
      await screenshot(page, 'shared-email');
      await page.context().close();
    });

    it('shows a received email the same way', async () => {
      const sent = await sendTo(inbound.port, {
        envelope: { from: 'grace@sender.test', to: ['support@inbox.test'] },
        from: 'Grace <grace@sender.test>',
        to: 'support@inbox.test',
        subject: 'Question <i>42</i>',
        html: '<p id="question">Where is <b>it</b>?</p>',
        text: 'Where is it?',
      });
      const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;
      const { data } = await t.resend.emails.share(id);
      const page = await visit(data!.url);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Question <i>42</i>');
      assert.match(await page.locator('dl.facts').innerText(), /From\s+grace@sender\.test\s+To\s+support@inbox\.test\s+Subject\s+Question <i>42<\/i>\s+Date\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      assert.equal(await page.frameLocator('iframe.message').locator('#question').innerText(), 'Where is it?');
      assert.equal(await page.locator('nav').count(), 0);
      await page.context().close();
    });

    it('shows a small "Link not found" page once the link has expired, or when it was altered', async () => {
      const { data: email } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Short-lived', text: 'soon gone' });
      const { data } = await t.resend.emails.share(email!.id, { expiresIn: '1h' });
      const tampered = `${data!.url.slice(0, -1)}${data!.url.endsWith('A') ? 'B' : 'A'}`;
      t.advance(HOUR);
      for (const url of [data!.url, tampered]) {
        const page = await visit(url);
        assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Link not found');
        assert.doesNotMatch(await page.locator('main').innerText(), /Short-lived|soon gone/);
        assert.equal(await page.locator('iframe').count(), 0);
        await page.context().close();
      }
    });
  });
}
