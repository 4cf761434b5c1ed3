import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

// A domain the guards paused (its bounces through a real relay refusing with 550, then a broadcast)
// shows why and since when on its page, and its Resume button (a CSRF-checked form) sends the rest.
// MAILROOM_GUARD_MIN_SENDS is lowered to 20 so that 25 bounces are enough.

for (const dialect of dialects) {
  describe(`dashboard: a domain's paused marketing mail (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let relay: TestSmtpServer;
    let browser: Browser;
    let page: Page;

    before(async () => {
      relay = await startSmtpServer();
      relay.onRecipient = (address) => (address.startsWith('bad-') ? { code: 550, message: '5.1.1 No such user here' } : undefined);
      t = await startApp(dialect, { env: { SMTP_URL: relay.url, MAILROOM_GUARD_MIN_SENDS: '20', MAILROOM_GUARD_RECHECK_MS: '60000' } });
      browser = await launchBrowser();
      page = await signedIn(browser, t);
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      await relay?.close();
    });

    it('shows the pause with its reason, and Resume sends the broadcast', async () => {
      const { data: domain } = await t.resend.domains.create({ name: 'paused.test' });
      await page.goto(`/dashboard/domains/${domain!.id}`);
      assert.equal(await page.getByRole('alert').count(), 0);

      const bounces = Array.from({ length: 25 }, (_, i) => ({ from: 'ops@paused.test', to: `bad-${i}@dest.test`, subject: 'Alert', text: 'x' }));
      assert.equal((await t.resend.batch.send(bounces)).error, null);
      const bounced = () => t.ctx.db.selectFrom('emails').select('id').where('last_event', '=', 'bounced').execute();
      await eventually(async () => (await bounced()).length === 25 || undefined, 30_000);
      const segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      await t.resend.contacts.create({ email: 'reader@dest.test', segments: [{ id: segment }] });
      await t.resend.broadcasts.create({ segmentId: segment, from: 'news@paused.test', subject: 'News', text: 'Hello', send: true } as never);
      await eventually(async () => ((await t.resend.domains.get(domain!.id)).data as { sending_paused: unknown } | null)?.sending_paused ?? undefined);

      await page.reload();
      const banner = page.getByRole('alert');
      assert.match(await banner.innerText(), /Marketing mail paused\s+Bounce rate 100\.00% \(25 of 25 sends in the last 24 hours\) is above 4\.00%\. Broadcasts and automations from paused\.test wait since \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}; transactional mail goes on\./);
      await screenshot(page, 'domain-paused');

      await banner.getByRole('button', { name: 'Resume marketing mail' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain!.id}?done=resumed`);
      assert.equal(await page.getByRole('alert').count(), 0);
      assert.match(await page.getByRole('status').innerText(), /Marketing mail resumed/);
      t.advance(60_000);
      await eventually(() => relay.messages.find((m) => m.parsed.subject === 'News'), 30_000);
    });
  });
}
