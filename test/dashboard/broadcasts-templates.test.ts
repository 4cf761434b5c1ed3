import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';

const from = 'Acme News <news@example.com>';

for (const dialect of dialects) {
  describe(`dashboard: broadcasts and templates (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let browser: Browser;
    let page: Page;
    let segment: string;
    before(async () => {
      // The worker delivers in capture mode (no SMTP_URL).
      t = await startApp(dialect);
      segment = (await t.resend.segments.create({ name: 'Readers & <friends>' })).data!.id;
      for (const email of ['ann@example.com', 'bob@example.com']) await t.resend.contacts.create({ email, segments: [{ id: segment }] });
      browser = await launchBrowser();
      page = await signedIn(browser, t);
      // "Send now" and "Cancel" ask first (data-confirm): say yes.
      page.on('dialog', (dialog) => void dialog.accept());
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    it('lists a broadcast, sends it from its page, then shows its emails by status and each recipient', async () => {
      const { data } = await t.resend.broadcasts.create({ name: 'November <news>', segmentId: segment, from, subject: 'Our news', html: '<p>Hello {{{FIRST_NAME|there}}}</p>' });
      const id = data!.id;

      await page.goto('/dashboard/broadcasts');
      const row = page.getByRole('row').filter({ hasText: 'November <news>' });
      assert.match(await row.innerText(), /Readers & <friends>\s+draft/, 'name and segment name, escaped, and the status');
      await screenshot(page, 'broadcasts-list');

      await row.getByRole('link', { name: 'November <news>' }).click();
      await page.waitForURL(`**/dashboard/broadcasts/${id}`);
      assert.equal(await page.frameLocator('iframe.message').locator('p').innerText(), 'Hello {{{FIRST_NAME|there}}}', 'the html as written, before personalisation');
      await page.getByRole('button', { name: 'Send now' }).click();
      await page.waitForURL(`**/dashboard/broadcasts/${id}?done=sent`);

      await eventually(async () => {
        const emails = await t.ctx.db.selectFrom('emails').select('last_event').where('broadcast_id', '=', id).execute();
        return emails.length === 2 && emails.every((e) => e.last_event === 'delivered');
      });
      assert.equal((await t.resend.broadcasts.get(id)).data!.status, 'sent');
      await page.reload();
      const counts = page.getByRole('table', { name: 'Emails by status' });
      assert.match(await counts.getByRole('row').filter({ hasText: 'delivered' }).innerText(), /delivered\s+2/);
      const recipients = page.getByRole('table', { name: 'Recipients, newest first' });
      for (const email of ['ann@example.com', 'bob@example.com']) {
        assert.match(await recipients.getByRole('row').filter({ hasText: email }).innerText(), /delivered/);
      }
      assert.equal(await page.getByRole('button', { name: 'Send now' }).count(), 0, 'a sent broadcast cannot be sent again');
      await screenshot(page, 'broadcast-detail');
    });

    it('cancels a scheduled broadcast from its page, which makes it a draft again', async () => {
      const { data } = await t.resend.broadcasts.create({ name: 'Later', segmentId: segment, from, subject: 'Soon', html: '<p>Soon</p>', send: true, scheduledAt: 'in 1 hour' });
      const id = data!.id;
      await page.goto(`/dashboard/broadcasts/${id}`);
      assert.match(await page.getByRole('region', { name: 'Cancel' }).innerText(), /Scheduled for/);
      await page.getByRole('button', { name: 'Cancel the broadcast' }).click();
      await page.waitForURL(`**/dashboard/broadcasts/${id}?done=canceled`);
      assert.equal((await t.resend.broadcasts.get(id)).data!.status, 'draft');
      assert.equal(await page.getByRole('button', { name: 'Schedule' }).count(), 1, 'a draft again: it can be scheduled');
    });

    it('schedules a draft from its page', async () => {
      const { data } = await t.resend.broadcasts.create({ name: 'December', segmentId: segment, from, subject: 'Soon', html: '<p>Soon</p>' });
      await page.goto(`/dashboard/broadcasts/${data!.id}`);
      await page.getByLabel('Send at (ISO 8601 or "in 1 hour")').fill('in 2 hours');
      await page.getByRole('button', { name: 'Schedule' }).click();
      await page.waitForURL(`**/dashboard/broadcasts/${data!.id}?done=scheduled`);
      const shown = (await t.resend.broadcasts.get(data!.id)).data!;
      assert.equal(shown.status, 'scheduled');
      assert.equal(Date.parse(shown.scheduled_at!.replace(' ', 'T').replace(/\+00$/, 'Z')) - t.clock.now() > 3600_000, true, 'about two hours ahead');
    });

    it("previews a template with a sample value typed in its form, escaped as sending escapes it, and publishes it", async () => {
      const { data } = await t.resend.templates.create({
        name: 'Welcome',
        alias: 'welcome',
        subject: 'Hi {{{NAME}}}',
        html: '<p id="greeting">Hello {{{NAME}}}, your plan: {{{PLAN}}}</p>',
        variables: [
          { key: 'NAME', type: 'string' },
          { key: 'PLAN', type: 'string', fallbackValue: 'free' },
        ],
      });
      const id = data!.id;

      await page.goto('/dashboard/templates');
      assert.match(await page.getByRole('row').filter({ hasText: 'Welcome' }).innerText(), /welcome\s+draft/);
      await screenshot(page, 'templates-list');

      await page.getByRole('link', { name: 'Welcome' }).click();
      await page.waitForURL(`**/dashboard/templates/${id}`);
      const greeting = () => page.frameLocator('iframe.message').locator('#greeting').innerText();
      assert.equal(await greeting(), 'Hello NAME, your plan: free', "without values: the fallback, else the variable's name");

      await page.getByLabel('NAME', { exact: true }).fill('Ann <b>Lee</b>');
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.waitForURL(/sample\.NAME=Ann/);
      assert.equal(await greeting(), 'Hello Ann <b>Lee</b>, your plan: free', 'the value, escaped in the html');
      assert.equal(await page.frameLocator('iframe.message').locator('b').count(), 0);
      assert.equal(await page.locator('.preview-subject').innerText(), 'Hi Ann <b>Lee</b>');
      assert.equal(await page.getByLabel('NAME', { exact: true }).inputValue(), 'Ann <b>Lee</b>', 'the form keeps the value');

      await page.getByRole('button', { name: 'Publish' }).click();
      await page.waitForURL(`**/dashboard/templates/${id}?done=published`);
      assert.equal((await t.resend.templates.get(id)).data!.status, 'published');
      await page.getByLabel('NAME', { exact: true }).fill('Ann');
      await page.getByRole('button', { name: 'Preview' }).click();
      await page.waitForURL(/sample\.NAME=Ann&/);
      assert.equal(await greeting(), 'Hello Ann, your plan: free');
      await screenshot(page, 'template-detail');
    });
  });
}
