// A real browser for the dashboard tests: Debian's chromium (installed by .ci/run) driven by
// playwright-core, signed in to a test app with its full-access key.
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Locator, type Page } from 'playwright-core';
import type { TestApp } from './harness.ts';

/** Where screenshots go: DASHBOARD_SCREENSHOTS (docs/dashboard to refresh the docs' pictures), else a folder git ignores. */
const SCREENSHOTS = process.env.DASHBOARD_SCREENSHOTS ?? '.screenshots';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** The dashboard tests' `skip` option: they need a chromium (CI installs Debian's), and say so when there is none. */
export const withBrowser = { skip: existsSync(CHROMIUM) ? false : `no chromium at ${CHROMIUM} (apt install chromium, or set CHROMIUM_PATH): the browser tests are skipped` };

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-dev-shm-usage'] });
}

/** A new page (its own cookies), signed in to `t`'s dashboard with `key` (the app's full-access key by default). */
export async function signedIn(browser: Browser, t: TestApp, key = t.token): Promise<Page> {
  const context = await browser.newContext({ baseURL: t.url, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('API key (full access)').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/dashboard/emails');
  return page;
}

/** Saves a picture of the whole page as `<name>.png`. */
export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

// The tests are compiled without the DOM's types: a canvas is described by what is used of it.
type Canvas = { width: number; height: number; getContext(kind: '2d'): { getImageData(...box: number[]): { data: Uint8ClampedArray } } };

/** The pixels of a chart's canvas that are not transparent: something was drawn. */
export async function paintedPixels(chart: Locator): Promise<number> {
  await chart.locator('canvas').waitFor();
  return chart.locator('canvas').evaluate((element) => {
    const canvas = element as unknown as Canvas;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let count = 0;
    for (let i = 3; i < data.length; i += 4) if (data[i] !== 0) count++;
    return count;
  });
}

/** `page` with its console errors and uncaught exceptions added to `errors`, which a test expects empty. */
export function watchErrors(page: Page, errors: string[]): Page {
  page.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
  page.on('pageerror', (error) => void errors.push(error.message));
  return page;
}
