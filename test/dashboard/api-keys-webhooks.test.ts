import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { Resend } from 'resend';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

/** Accepts the confirmation the next click asks for (data-confirm). */
const confirming = (page: Page) => page.once('dialog', (dialog) => void dialog.accept());

for (const dialect of dialects) {
  describe(`dashboard: API keys and webhooks (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let smtp: TestSmtpServer;
    let receiver: WebhookReceiver;
    let browser: Browser;

    before(async () => {
      smtp = await startSmtpServer();
      receiver = await startWebhookReceiver();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url, MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
      browser = await launchBrowser();
    });
    after(async () => {
      await browser.close();
      await t.close();
      await receiver.close();
      await smtp.close();
    });

    it('creates a key whose token is shown once and works, binds a sending key to a domain, and deletes a key', async () => {
      await t.resend.domains.create({ name: 'keys.test' });
      const page = await signedIn(browser, t);
      await page.goto('/dashboard/api-keys');

      await page.getByLabel('Name').fill('Page <b>key</b>');
      await page.getByRole('button', { name: 'Create key' }).click();
      await page.getByRole('heading', { name: 'API key "Page <b>key</b>" created' }).waitFor();
      // The answer to the POST itself: the token is in no URL.
      assert.equal(new URL(page.url()).pathname, '/dashboard/api-keys');
      assert.match(await page.getByRole('alert').textContent() ?? '', /will not be shown again/);
      const token = (await page.locator('#token').textContent())!;
      assert.match(token, /^re_/);
      assert.equal(await page.getByRole('button', { name: 'Copy' }).getAttribute('data-copy'), token);
      await screenshot(page, 'api-key-created');
      const client = new Resend(token, { baseUrl: t.url });
      assert.equal((await client.domains.list()).error, null);

      await page.goto('/dashboard/api-keys');
      await page.getByLabel('Name').fill('Sender');
      await page.getByLabel('Permission').selectOption('sending_access');
      await page.getByLabel('Domain (sending access only)').selectOption({ label: 'keys.test' });
      await page.getByRole('button', { name: 'Create key' }).click();
      const sender = new Resend((await page.locator('#token').textContent())!, { baseUrl: t.url });
      const base = { to: 'jane@example.com', subject: 'Hi', text: 'Hi' };
      assert.equal((await sender.emails.send({ ...base, from: 'a@keys.test' })).error, null);
      assert.equal((await sender.emails.send({ ...base, from: 'a@other.test' })).error?.name, 'validation_error');

      await page.goto('/dashboard/api-keys');
      const row = page.getByRole('row', { name: /Page <b>key<\/b>/ });
      assert.match((await row.textContent())!, /full access\s*any/);
      assert.match((await page.getByRole('row', { name: /Sender/ }).textContent())!, /sending access\s*keys\.test/);
      assert.ok(!(await page.content()).includes(token), 'the token is never shown again');
      await screenshot(page, 'api-keys');

      confirming(page);
      await row.getByRole('button', { name: /Delete/ }).click();
      await page.getByText('The API key was deleted.').waitFor();
      assert.equal(await page.getByRole('row', { name: /Page <b>key<\/b>/ }).count(), 0);
      assert.equal((await client.domains.list()).error?.name, 'invalid_api_key');
      await page.context().close();
    });

    it('ends the session whose own key is deleted: the next page asks to sign in', async () => {
      const { data: own } = await t.resend.apiKeys.create({ name: 'Mine' });
      const page = await signedIn(browser, t, own!.token);
      await page.goto('/dashboard/api-keys');
      const row = page.getByRole('row', { name: /Mine/ });
      assert.match((await row.textContent())!, /this session/);
      confirming(page);
      await row.getByRole('button', { name: /Delete/ }).click();
      await page.waitForURL('**/dashboard/sign-in?**');
      await page.goto('/dashboard/webhooks');
      await page.waitForURL('**/dashboard/sign-in?**');
      await page.context().close();
    });

    it('shows a failing webhook’s attempts, replays an event once the endpoint recovers, and disables and enables it', async () => {
      receiver.answer = () => 500;
      const page = await signedIn(browser, t);
      await page.goto('/dashboard/webhooks');
      await page.getByLabel('Endpoint URL').fill(receiver.url);
      await page.getByLabel('email.sent').check();
      await page.getByLabel('email.delivered').check();
      await page.getByRole('button', { name: 'Create webhook' }).click();
      await page.getByText('The webhook was created').waitFor();
      const webhookId = new URL(page.url()).pathname.split('/').at(-1)!;
      const api = await requestJson(t, 'GET', `/webhooks/${webhookId}`);
      assert.deepEqual(api.body.events, ['email.sent', 'email.delivered']);
      assert.equal(await page.getByRole('button', { name: 'Copy' }).getAttribute('data-copy'), api.body.signing_secret);

      // An email whose events fail at the endpoint, twice each.
      const sent = (await t.resend.emails.send({ from: 'Acme <news@example.com>', to: 'jane@example.com', subject: '<b>Hi</b>', text: 'Hi' })).data!.id;
      const forEmailSent = () => receiver.received.filter((hook) => hook.payload.type === 'email.sent' && hook.payload.data.email_id === sent);
      // The clock moves only once every post has settled: a job running when it jumps would look abandoned.
      const settled = async (posts: number) => {
        const events = await requestJson(t, 'GET', `/webhooks/${webhookId}/events`);
        return events.body.data.length === 2 && events.body.data.every((e: { status: string }) => e.status === 'attempting') && receiver.received.length === posts;
      };
      await eventually(() => settled(2));
      t.advance(5_000);
      await eventually(() => settled(4));

      await page.reload();
      const delivery = page.getByRole('row', { name: /email\.sent/ });
      assert.match((await delivery.textContent())!, /attempting/);
      await screenshot(page, 'webhook-detail');
      await delivery.getByRole('link').click();
      await page.getByRole('heading', { name: 'Attempts' }).waitFor();
      const attempts = page.locator('table.list tbody tr');
      assert.equal(await attempts.count(), 2);
      for (const text of await attempts.allTextContents()) assert.match(text, /500[\s\S]*\d+ ms[\s\S]*refused/);
      // The payload is shown as text: the subject's markup is escaped.
      assert.match((await page.locator('pre').textContent())!, /"subject": "<b>Hi<\/b>"/);
      await screenshot(page, 'webhook-delivery');

      receiver.answer = () => 200;
      await page.getByRole('button', { name: 'Replay' }).click();
      await page.getByText('The event is being sent again.').waitFor();
      await eventually(() => forEmailSent().length === 3);
      await eventually(async () => (await requestJson(t, 'GET', `/webhooks/${webhookId}/events`)).body.data.some((e: { type: string; status: string }) => e.type === 'email.sent' && e.status === 'success'));
      await page.reload();
      assert.equal(await attempts.count(), 3);
      assert.match((await attempts.first().textContent())!, /200/);

      await page.goto(`/dashboard/webhooks/${webhookId}`);
      await page.getByRole('button', { name: 'Disable' }).click();
      await page.getByText('The webhook is disabled').waitFor();
      assert.equal((await requestJson(t, 'GET', `/webhooks/${webhookId}`)).body.status, 'disabled');
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.getByText('The webhook is enabled.').waitFor();
      assert.equal((await requestJson(t, 'GET', `/webhooks/${webhookId}`)).body.status, 'enabled');

      await page.goto('/dashboard/webhooks');
      assert.match((await page.getByRole('row', { name: new RegExp(receiver.url.replaceAll('.', '\\.')) }).textContent())!, /email\.sent\s*email\.delivered\s*enabled/);
      await screenshot(page, 'webhooks');
      await page.context().close();
    });
  });
}
