import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { toTimestamp } from '../../src/time/clock.ts';
import { recordEngagement } from '../../src/domain/events/email-events.ts';
import * as emails from '../../src/store/emails.ts';
import { launchBrowser, paintedPixels, screenshot, signedIn, watchErrors, withBrowser } from '../support/browser.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';

// The metrics page in a real browser: the chart drawn by uPlot under the dashboard's CSP, and the
// totals of a few emails sent, opened and clicked at moments of the test clock.

const DAY = 24 * 3_600_000;

for (const dialect of dialects) {
  describe(`dashboard: metrics (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let browser: Browser;
    let page: Page;

    before(async () => {
      t = await startApp(dialect);
      t.advance(-3 * DAY);
      const first = (await t.resend.emails.send({ from: 'news@acme.test', to: ['delivered@resend.dev', 'bounced@resend.dev', 'complained@resend.dev'], subject: 'a', html: '<p>a</p>' })).data!.id;
      await eventually(async () => (await emails.listEvents(t.ctx.db, first)).length === 7);
      t.advance(2 * DAY);
      const second = (await t.resend.emails.send({ from: 'news@acme.test', to: 'delivered@resend.dev', subject: 'b', html: '<p>b</p>' })).data!.id;
      await eventually(async () => (await emails.listEvents(t.ctx.db, second)).length === 2);
      const email = (await emails.findEmailById(t.ctx.db, second))!;
      for (const type of ['opened', 'opened', 'clicked'] as const) {
        await t.ctx.writer.transaction((tx) => recordEngagement(t.ctx, tx, email, { type, recipient: 'delivered@resend.dev', link: 'https://acme.test' }, toTimestamp(t.clock.now())));
      }
      t.advance(DAY);
      browser = await launchBrowser();
      page = await signedIn(browser, t);
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    it('draws sent, delivered, bounced, complained, opened and clicked per day, with their totals', async () => {
      const errors: string[] = [];
      watchErrors(page, errors);
      await page.getByRole('link', { name: 'Metrics' }).click();
      await page.waitForURL('**/dashboard/metrics');
      const chart = page.locator('#metrics-chart');
      await chart.locator('canvas').waitFor();
      assert.equal(await chart.getAttribute('data-drawn'), 'true');
      // Something was painted: the canvas has pixels that are not transparent.
      const painted = await paintedPixels(chart);
      assert.ok(painted > 1000, `painted pixels: ${painted}`);
      assert.deepEqual(await page.locator('.u-legend .u-series th').allInnerTexts().then((labels) => labels.map((l) => l.trim()).filter(Boolean).slice(1)), [
        'sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked',
      ]);
      const totals = Object.fromEntries(
        await page.locator('#metrics-totals tbody tr').evaluateAll((rows) => rows.map((row) => [row.querySelector('th')!.textContent, row.querySelector('td')!.textContent])),
      );
      assert.deepEqual(totals, {
        Sent: '4', Delivered: '3', Bounced: '1', Complained: '1', Opened: '2', Clicked: '1',
        'Delivery rate': '75.00%', 'Bounce rate': '25.00%', 'Complaint rate': '33.33%', 'Open rate': '33.33%', 'Click rate': '33.33%',
      });
      assert.deepEqual(errors, []);
      await screenshot(page, 'metrics');
    });

    it('shows what it was asked for, and says what is wrong with a bad time zone', async () => {
      await page.goto('/dashboard/metrics?granularity=hourly&timezone=Asia%2FKolkata');
      await page.locator('#metrics-chart canvas').waitFor();
      assert.match(await page.locator('main p').first().innerText(), /hourly periods in Asia\/Kolkata/);
      const response = await page.goto('/dashboard/metrics?timezone=Nowhere%2FLand');
      assert.equal(response!.status(), 422);
      assert.match(await page.getByRole('alert').innerText(), /"Nowhere\/Land" is not an IANA time zone/);
    });
  });
}
