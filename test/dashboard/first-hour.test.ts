import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedIn, withBrowser } from '../support/browser.ts';
import { eventually, startApp, type TestApp } from '../support/harness.ts';

// What a new user met in the dashboard's first hour, in a real browser: a console free of errors (the
// icon), "Show remote images" only where there are some, a daily chart labelled by day, a compact menu
// on a phone, and the sign-in form in the middle. Pages, not data: SQLite is enough.

const DAY = 86_400;

describe('dashboard: the first hour', withBrowser, () => {
  let t: TestApp;
  let browser: Browser;
  let page: Page;
  const errors: string[] = [];

  before(async () => {
    t = await startApp('sqlite');
    browser = await launchBrowser();
    page = await signedIn(browser, t);
    page.on('console', (message) => void (message.type() === 'error' && errors.push(`${page.url()}: ${message.text()}`)));
    page.on('pageerror', (error) => void errors.push(error.message));
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  /** An email sent with `html`, delivered (captured), and its page open. */
  async function emailPage(html: string): Promise<void> {
    const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'delivered@resend.dev', subject: 'Images?', html });
    await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivered');
    await page.goto(`/dashboard/emails/${data!.id}`);
  }

  it('has an icon: no page logs an error in the console, and /favicon.ico answers one', async () => {
    const icon = await fetch(`${t.url}/favicon.ico`);
    assert.deepEqual([icon.status, icon.headers.get('content-type')], [200, 'image/svg+xml']);
    assert.match(await icon.text(), /^<svg /);
    for (const path of ['/dashboard/emails', '/dashboard/domains', '/dashboard/metrics']) {
      await page.goto(path);
      await page.waitForLoadState('networkidle');
    }
    const signedOut = await browser.newPage({ baseURL: t.url });
    signedOut.on('console', (message) => void (message.type() === 'error' && errors.push(`sign-in: ${message.text()}`)));
    await signedOut.goto('/dashboard/sign-in');
    await signedOut.waitForLoadState('networkidle');
    await signedOut.close();
    assert.deepEqual(errors, []);
  });

  it('offers "Show remote images" only for html that has some', async () => {
    const offered = () => page.getByRole('link', { name: 'Show remote images' }).count();
    await emailPage('<p>Hello</p><a href="https://example.com/">a link is no image</a><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=" alt="">');
    assert.equal(await offered(), 0);
    for (const html of [
      '<p>Hi</p><img src="https://cdn.example.com/logo.png" alt="logo">',
      '<table background="http://cdn.example.com/bg.png"><tr><td>Hi</td></tr></table>',
      '<div style="background-image: url(\'https://cdn.example.com/bg.png\')">Hi</div>',
      '<style>.hero { background: url(//cdn.example.com/hero.png) }</style><div class="hero">Hi</div>',
      '<img src="&#104;ttps://cdn.example.com/entity.png" alt="">',
    ]) {
      await emailPage(html);
      assert.equal(await offered(), 1, html);
    }
  });

  it('labels the time axis of a daily chart by day, and an hourly one by whole hours of its zone', async () => {
    const ticks = async (path: string) => {
      await page.goto(path);
      const chart = page.locator('#metrics-chart');
      await chart.locator('canvas').waitFor();
      return JSON.parse((await chart.getAttribute('data-ticks'))!) as number[];
    };
    const daily = await ticks('/dashboard/metrics');
    assert.ok(daily.length >= 3, `${daily.length} ticks`);
    assert.deepEqual(daily.filter((tick) => tick % DAY !== 0), [], 'every tick at midnight UTC');
    // Kolkata is UTC+05:30: a whole hour there is half past one in UTC.
    const hourly = await ticks(`/dashboard/metrics?granularity=hourly&timezone=Asia%2FKolkata&start=${new Date(Date.now() - 2 * DAY * 1000).toISOString().slice(0, 10)}`);
    assert.ok(hourly.length >= 3, `${hourly.length} ticks`);
    assert.deepEqual(hourly.filter((tick) => (tick + 19_800) % 3600 !== 0), [], 'every tick at a whole hour in Asia/Kolkata');
  });

  it('folds the navigation behind a Menu button on a phone', async () => {
    const phone = await browser.newContext({ baseURL: t.url, viewport: { width: 375, height: 740 } });
    const small = await phone.newPage();
    await small.goto('/dashboard/sign-in');
    await small.getByLabel('API key (full access)').fill(t.token);
    await small.getByRole('button', { name: 'Sign in' }).click();
    await small.waitForURL('**/dashboard/emails');
    const menu = small.getByRole('button', { name: 'Menu' });
    const header = (await small.locator('header').boundingBox())!;
    assert.ok(header.height < 80, `the header is ${header.height} px tall`);
    assert.equal(await small.getByRole('link', { name: 'Webhooks' }).isVisible(), false);
    assert.equal(await menu.getAttribute('aria-expanded'), 'false');
    await menu.click();
    assert.equal(await menu.getAttribute('aria-expanded'), 'true');
    await small.getByRole('link', { name: 'Webhooks' }).click();
    await small.waitForURL('**/dashboard/webhooks');
    await phone.close();

    // On a desktop, no button: the sections in a row.
    await page.goto('/dashboard/emails');
    assert.equal(await page.getByRole('button', { name: 'Menu' }).isVisible(), false);
    assert.equal(await page.getByRole('link', { name: 'Webhooks' }).isVisible(), true);
  });

  it('puts the sign-in form in the middle of the page', async () => {
    const signedOut = await browser.newPage({ baseURL: t.url, viewport: { width: 1280, height: 900 } });
    await signedOut.goto('/dashboard/sign-in');
    const form = (await signedOut.locator('form.sign-in').boundingBox())!;
    const right = 1280 - (form.x + form.width);
    assert.ok(form.x > 300 && Math.abs(form.x - right) < 20, `${form.x} px from the left, ${right} px from the right`);
    await signedOut.close();
  });
});
