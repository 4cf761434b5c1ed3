import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { toTimestamp } from '../../src/time/clock.ts';
import { recordEngagement, type Engagement } from '../../src/domain/events/email-events.ts';
import * as emails from '../../src/store/emails.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

// The dashboard's sign-in, its emails pages and its defences, in a real browser (Debian's chromium)
// against the real app.

for (const dialect of dialects) {
  describe(`the dashboard: sign-in and emails (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let browser: Browser;
    let hooks: WebhookReceiver;

    before(async () => {
      hooks = await startWebhookReceiver();
      t = await startApp(dialect, { env: { MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      await t.resend.webhooks.create({ endpoint: hooks.url, events: ['email.delivered'] });
      browser = await launchBrowser();
    });
    after(async () => {
      await browser.close();
      await t.close();
      await hooks.close();
    });

    it('shows an email sent with the SDK in the open list without a reload, and its detail: html in a sandbox whose script does not run, text, timeline, raw download', async () => {
      const page = await signedIn(browser, t);
      let loads = 0;
      page.on('load', () => loads++);
      await page.waitForSelector('table[data-live]');
      const { data } = await t.resend.emails.send({
        from: 'Acme <hello@example.com>',
        to: 'ada@example.org',
        subject: 'Live <b>one</b>',
        html: '<p id="greeting">Hello</p><script>document.body.dataset.ran = "yes"</script><img src="https://tracker.example/p.gif" alt="">',
        text: 'Hello in text',
        tags: [{ name: 'kind', value: 'welcome' }],
      });
      const row = page.getByRole('link', { name: 'Live <b>one</b>' });
      await row.waitFor();
      assert.equal(loads, 0, 'the list changed without a reload');
      await screenshot(page, 'emails');

      await row.click();
      await page.waitForURL(`**/dashboard/emails/${data!.id}`);
      assert.equal(await page.getByRole('heading', { level: 1 }).textContent(), 'Live <b>one</b>');
      const frame = page.locator('iframe.message');
      assert.equal(await frame.getAttribute('sandbox'), '');
      const inner = page.frameLocator('iframe.message');
      assert.equal(await inner.locator('#greeting').textContent(), 'Hello');
      assert.equal(await inner.locator('body').getAttribute('data-ran'), null, 'the script in the email did not run');
      assert.match((await page.locator('pre.text').textContent())!, /Hello in text/);
      assert.ok(await page.getByText('kind: welcome').isVisible());
      await page.getByRole('heading', { name: 'Timeline' }).waitFor();
      await screenshot(page, 'email');

      // Once delivered (captured), the page shows the webhook it went to, and its download is GET /emails/:id/raw's, byte for byte.
      await eventually(async () => {
        await page.reload();
        return (await page.locator('#webhooks').count()) > 0;
      });
      assert.match((await page.locator('section[aria-labelledby="webhooks"]').textContent())!, /email\.delivered to/);
      await page.getByRole('link', { name: 'Download the .eml' }).waitFor();
      const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('link', { name: 'Download the .eml' }).click()]);
      const api = await t.fetch(`/emails/${data!.id}/raw`, { headers: { accept: 'message/rfc822' } });
      assert.deepEqual(readFileSync((await download.path())), Buffer.from(await api.arrayBuffer()));
      assert.match((await page.locator('table.headers').textContent())!, /message-id/);

      // A phone's width: the list stacks its rows.
      await page.setViewportSize({ width: 390, height: 844 });
      await page.goto('/dashboard/emails');
      await screenshot(page, 'emails-phone');
      await page.context().close();
    });

    it("shows opens and clicks on the timeline: a click's link as text, escaped, and bots marked as such", async () => {
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'reader@example.org', subject: 'Engaging', html: '<p>x</p>' });
      const id = data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, id))?.last_event === 'delivered');
      const link = 'https://shop.example/?q=<img src=x onerror=alert(1)>&a=1#top';
      const record = async (engagement: Engagement) => {
        const email = (await emails.findEmailById(t.ctx.db, id))!;
        await t.ctx.writer.transaction((tx) => recordEngagement(t.ctx, tx, email, engagement, toTimestamp(t.clock.now())));
      };
      await record({ type: 'clicked', recipient: 'reader@example.org', link, bot: 'HEAD request' });
      await record({ type: 'opened', recipient: 'reader@example.org', client: { ipAddress: '192.0.2.1', userAgent: 'Mail' } });
      await record({ type: 'clicked', recipient: 'reader@example.org', link, client: { ipAddress: '192.0.2.1', userAgent: 'Mail' } });

      const page = await signedIn(browser, t);
      await page.goto(`/dashboard/emails/${id}`);
      const items = page.locator('ol.timeline li');
      const texts = (await items.allTextContents()).map((text) => text.replace(/\s+/g, ' ').trim());
      const engaged = texts.filter((text) => /opened|clicked/.test(text));
      assert.equal(engaged.length, 3, texts.join('\n'));
      assert.match(engaged[0]!, /clicked bot reader@example\.org/);
      assert.match(engaged[0]!, /HEAD request/);
      assert.doesNotMatch(engaged[1]!, /bot/);
      assert.match(engaged[1]!, /opened reader@example\.org/);
      assert.doesNotMatch(engaged[2]!, /bot/);
      assert.equal(await items.locator('code.link').first().textContent(), link, 'the link, as text');
      assert.equal(await page.locator('ol.timeline img').count(), 0, 'nothing of the link became markup');
      assert.equal(await items.locator('.status-bot').count(), 1);
      await screenshot(page, 'email-engagement');
      await page.context().close();
    });

    it('filters the list by status, recipient, subject and tag', async () => {
      await t.resend.emails.send({ from: 'a@example.com', to: 'filter-me@example.org', subject: 'Findable subject', text: 'x', tags: [{ name: 'plan', value: 'pro' }] });
      const page = await signedIn(browser, t);
      for (const query of ['recipient=filter-me', 'subject=findable', 'tag=plan:pro']) {
        await page.goto(`/dashboard/emails?${query}`);
        const subjects = await page.locator('tbody a').allTextContents();
        assert.deepEqual(subjects, ['Findable subject'], query);
      }
      await page.goto('/dashboard/emails?status=bounced');
      assert.deepEqual(await page.locator('tbody a').allTextContents(), []);
      await page.context().close();
    });

    it('cancels a scheduled email from its page', async () => {
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Later', text: 'x', scheduledAt: 'in 1 hour' });
      const page = await signedIn(browser, t);
      await page.goto(`/dashboard/emails/${data!.id}`);
      await page.getByRole('button', { name: 'Cancel this email' }).click();
      await page.waitForURL(`**/dashboard/emails/${data!.id}`);
      assert.equal((await t.resend.emails.get(data!.id)).data!.last_event, 'canceled');
      await page.context().close();
    });

    it("runs only its own assets' scripts: a script a sender attached, downloaded from the same origin, is refused", async () => {
      const script = Buffer.from('document.title = "ran";').toString('base64');
      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Script', text: 'x', attachments: [{ filename: 'x.js', content: script, contentType: 'text/javascript' }] });
      const [attachment] = (await t.resend.emails.attachments.list({ emailId: data!.id })).data!.data;
      const link = new URL(attachment!.download_url);
      const page = await signedIn(browser, t);
      const csp = (await page.goto('/dashboard/emails'))!.headers()['content-security-policy']!;
      assert.match(csp, new RegExp(`script-src ${t.url}/dashboard/assets/;`));
      const violations: string[] = [];
      page.on('console', (message) => message.type() === 'error' && violations.push(message.text()));
      await assert.rejects(page.addScriptTag({ url: `${link.pathname}${link.search}` }), /Content Security Policy|Failed to load/i);
      assert.notEqual(await page.title(), 'ran');
      assert.ok(violations.some((text) => /Content Security Policy/.test(text)), violations.join('\n'));
      await page.context().close();
    });

    it('refuses a sending-access key, a change without the CSRF token, and everything after sign-out', async () => {
      const { data: sending } = await t.resend.apiKeys.create({ name: 'sender', permission: 'sending_access' });
      const context = await browser.newContext({ baseURL: t.url });
      const refused = await context.newPage();
      await refused.goto('/dashboard/sign-in');
      await refused.getByLabel('API key (full access)').fill(sending!.token);
      await refused.getByRole('button', { name: 'Sign in' }).click();
      assert.match((await refused.getByRole('alert').textContent())!, /sending-access key cannot sign in/);
      await screenshot(refused, 'sign-in');
      await context.close();

      const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.org', subject: 'Scheduled', text: 'x', scheduledAt: 'in 1 hour' });
      const page = await signedIn(browser, t);
      const cookies = await page.context().cookies();
      const cookie = cookies.map((c) => `${c.name}=${c.value}`).join('; ');
      const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
        fetch(`${t.url}/dashboard/emails/${data!.id}/cancel`, {
          method: 'POST',
          redirect: 'manual',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams(body),
        });
      assert.equal((await post({ _csrf: 'forged' }, { cookie })).status, 403);
      assert.equal((await post({})).status, 401);
      assert.equal((await t.resend.emails.get(data!.id)).data!.last_event, 'scheduled');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL('**/dashboard/sign-in');
      await page.goto('/dashboard/emails');
      assert.match(page.url(), /\/dashboard\/sign-in\?next=/);
      // The old cookie opens nothing either: the session is gone from the server.
      const stale = await fetch(`${t.url}/dashboard/emails`, { headers: { cookie }, redirect: 'manual' });
      assert.equal(stale.status, 401);
      await page.context().close();
    });
  });
}
