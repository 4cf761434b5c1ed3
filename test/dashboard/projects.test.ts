import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import pino from 'pino';
import { Resend } from 'resend';
import { launchBrowser, screenshot, watchErrors, withBrowser } from '../support/browser.ts';
import { cookiesOf, csrfField, postForm, signIn } from '../support/dashboard-forms.ts';
import { dialects, startApp, type TestApp } from '../support/harness.ts';
import { ADMIN_KEY, startTwoProjects, type TwoProjects } from '../support/projects.ts';

// The admin's dashboard (docs/projects.md): the admin key signs in to the projects, with each one's
// usage; creates one and sees its first key once; browses a project through the switcher; changes and
// deletes one. A project key's session never reaches any of it.

/** Accepts the confirmation the next click asks for (data-confirm). */
const confirming = (page: Page) => page.once('dialog', (dialog) => void dialog.accept());

const HOSTILE = '<img src=x onerror="document.title=1"> & "Co"';

/** A new page (its own cookies) signed in with `key`, once it has landed on `landing`. */
async function signedInAs(browser: Browser, t: TestApp, key: string, landing: string): Promise<Page> {
  const context = await browser.newContext({ baseURL: t.url, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto('/dashboard/sign-in');
  await page.getByLabel('API key (full access)').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(`**${landing}`);
  return page;
}

/** The cells of the projects list's row whose name is exactly `name`. */
async function rowOf(page: Page, name: string): Promise<string[]> {
  const row = page.locator('table.list tbody tr').filter({ has: page.getByRole('link', { name, exact: true }) });
  return (await row.locator('td').allTextContents()).map((cell) => cell.trim());
}

for (const dialect of dialects) {
  describe(`dashboard: projects (${dialect})`, withBrowser, () => {
    let two: TwoProjects;
    let t: TestApp;
    let browser: Browser;
    let aEmailId: string;
    /** Everything the app logs, at every level: a new project's token must be in none of it. */
    const logged: string[] = [];

    before(async () => {
      const log = pino({ level: 'trace' }, { write: (line: string) => void logged.push(line) });
      two = await startTwoProjects(dialect, { worker: false, log });
      t = two.t;
      const mail = (subject: string) => ({ from: 'hello@example.com', to: 'x@example.org', subject, text: subject });
      for (const subject of ['A mail 1', 'A mail 2', 'A mail 3']) aEmailId = (await two.a.emails.send(mail(subject))).data!.id;
      for (const subject of ['B mail 1', 'B mail 2']) assert.equal((await two.b.emails.send(mail(subject))).error, null);
      // Canceled mail is not counted as sent.
      const later = (await two.b.emails.send({ ...mail('B canceled'), scheduledAt: new Date(t.clock.now() + 3600_000).toISOString() })).data!;
      assert.equal((await two.b.emails.cancel(later.id)).error, null);
      await two.a.domains.create({ name: 'a-dash.example' });
      await two.b.domains.create({ name: 'b-one.example' });
      await two.b.domains.create({ name: 'b-two.example' });
      browser = await launchBrowser();
    });
    after(async () => {
      await browser.close();
      await t.close();
    });

    it('signs the admin key in to the projects, each with the emails it sent today and this month, its domains and keys', async () => {
      const errors: string[] = [];
      const page = watchErrors(await signedInAs(browser, t, ADMIN_KEY, '/dashboard/projects'), errors);
      await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
      // Name, sent today, sent this month, domains, API keys.
      assert.deepEqual((await rowOf(page, 'default')).slice(0, 5), ['default', '3', '3', '1', '1']);
      assert.deepEqual((await rowOf(page, 'Client B')).slice(0, 5), ['Client B', '2', '2', '2', '1']);
      // The admin's only section is the projects; a project's pages wait until it picks one.
      assert.deepEqual(await page.locator('#sections a').allTextContents(), ['Projects']);
      await page.goto('/dashboard/emails');
      await page.waitForURL('**/dashboard/projects');
      await screenshot(page, 'projects');
      assert.deepEqual(errors, []);
      await page.context().close();
    });

    it('creates a project and shows its first key once: not after a reload, nor going back', async () => {
      const errors: string[] = [];
      const page = watchErrors(await signedInAs(browser, t, ADMIN_KEY, '/dashboard/projects'), errors);
      await page.getByLabel('Name').fill(HOSTILE);
      await page.getByLabel('Daily quota').fill('500');
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: `Project "${HOSTILE}" created` }).waitFor();
      // The answer to the POST itself: the token is in no URL.
      assert.equal(new URL(page.url()).pathname, '/dashboard/projects');
      assert.match((await page.getByRole('alert').textContent()) ?? '', /will not be shown again/);
      const token = (await page.locator('#token').textContent())!;
      assert.match(token, /^re_/);
      assert.equal(await page.getByRole('button', { name: 'Copy' }).getAttribute('data-copy'), token);
      assert.equal(await page.locator('main img').count(), 0, 'the name is text, not markup');
      await screenshot(page, 'project-created');
      const client = new Resend(token, { baseUrl: t.url });
      assert.deepEqual((await client.domains.list()).data?.data, [], 'the key works, in a project of its own');
      assert.ok(logged.length > 0 && !logged.join('').includes(token), 'the token is never logged');

      await page.reload();
      await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
      assert.ok(!(await page.content()).includes(token), 'a reload does not show the token');
      await page.goBack();
      await page.getByRole('heading', { name: 'Projects', exact: true }).waitFor();
      assert.ok(!(await page.content()).includes(token), 'going back does not show the token');
      await page.goForward();
      assert.ok(!(await page.content()).includes(token), 'nor going forward');

      // One project made, not one per reload; its name escaped in the list and on its page.
      const list = await two.admin('GET', '/projects');
      assert.equal(list.body.data.filter((project: { name: string }) => project.name === HOSTILE).length, 1);
      await page.goto('/dashboard/projects');
      assert.deepEqual((await rowOf(page, HOSTILE)).slice(0, 6), [HOSTILE, '0', '0', '0', '1', '500 a day']);
      await page.getByRole('link', { name: HOSTILE, exact: true }).click();
      await page.getByRole('heading', { name: HOSTILE, exact: true }).waitFor();
      assert.equal(await page.locator('main img').count(), 0);
      assert.equal(await page.title(), `${HOSTILE} · Mailroom`);
      assert.deepEqual(errors, []);
      await page.context().close();
    });

    it('switches to project B and shows B’s emails and domains only, under a banner, then back to the list and to A', async () => {
      const page = await signedInAs(browser, t, ADMIN_KEY, '/dashboard/projects');
      await page.getByRole('row', { name: /Client B/ }).getByRole('button', { name: /Browse/ }).click();
      await page.waitForURL('**/dashboard/emails');
      const banner = page.getByRole('complementary', { name: 'Project' });
      assert.match((await banner.textContent())!, /Browsing the project Client B as the admin/);
      const main = page.locator('main');
      await main.getByText('B mail 1').waitFor();
      assert.match((await main.textContent())!, /B mail 2/);
      assert.doesNotMatch((await main.textContent())!, /A mail/);
      await screenshot(page, 'project-browsing');
      await page.goto('/dashboard/domains');
      assert.match((await main.textContent())!, /b-one\.example/);
      assert.match((await main.textContent())!, /b-two\.example/);
      assert.doesNotMatch((await main.textContent())!, /a-dash\.example/);
      assert.equal((await page.goto(`/dashboard/emails/${aEmailId}`))!.status(), 404, 'A’s email is not B’s');

      await page.goto('/dashboard/domains');
      await banner.getByRole('link', { name: 'Back to the projects' }).click();
      await page.waitForURL('**/dashboard/projects');
      assert.equal(await banner.count(), 0, 'the list has no banner');
      assert.match((await rowOf(page, 'Client B'))[0]!, /browsing/);
      await page.getByRole('row', { name: /default/ }).getByRole('button', { name: /Browse/ }).click();
      await page.waitForURL('**/dashboard/emails');
      assert.match((await banner.textContent())!, /Browsing the project default/);
      await main.getByText('A mail 1').waitFor();
      assert.doesNotMatch((await main.textContent())!, /B mail/);
      await page.context().close();
    });

    it('never shows a project key’s session the projects, nor lets it switch', async () => {
      for (const key of [t.token, two.bToken]) {
        const cookie = cookiesOf(await signIn(t, key));
        const emails = await fetch(`${t.url}/dashboard/emails`, { headers: { cookie, accept: 'text/html' } });
        const csrf = csrfField(await emails.text());
        const projects = await fetch(`${t.url}/dashboard/projects`, { headers: { cookie, accept: 'text/html' } });
        assert.equal(projects.status, 403);
        assert.match(await projects.text(), /Only an admin key/);
        assert.equal((await fetch(`${t.url}/dashboard/projects/${two.bId}`, { headers: { cookie, accept: 'text/html' } })).status, 403);
        for (const path of ['/dashboard/projects', `/dashboard/projects/${two.bId}/switch`, `/dashboard/projects/${two.bId}/delete`]) {
          assert.equal((await postForm(t, path, { _csrf: csrf, name: 'Sneaky' }, cookie)).status, 403, path);
        }
      }
      const names = (await two.admin('GET', '/projects')).body.data.map((project: { name: string }) => project.name);
      assert.ok(!names.includes('Sneaky'));
      // A's session still shows A's mail: nothing switched it.
      const cookie = cookiesOf(await signIn(t, t.token));
      const emails = await (await fetch(`${t.url}/dashboard/emails`, { headers: { cookie, accept: 'text/html' } })).text();
      assert.match(emails, /A mail 1/);
      assert.doesNotMatch(emails, /B mail|Browsing the project/);
    });

    it('refuses the admin’s changes without the session’s CSRF token', async () => {
      const signedIn = await signIn(t, ADMIN_KEY);
      assert.equal(signedIn.headers.get('location'), '/dashboard/projects');
      const cookie = cookiesOf(signedIn);
      const list = await fetch(`${t.url}/dashboard/projects`, { headers: { cookie, accept: 'text/html' } });
      const csrf = csrfField(await list.text());
      const before = (await two.admin('GET', '/projects')).body.data.length;
      const attempts: Record<string, string>[] = [{ name: 'No token' }, { name: 'Wrong token', _csrf: `${csrf}x` }];
      for (const fields of attempts) {
        assert.equal((await postForm(t, '/dashboard/projects', fields, cookie)).status, 403);
        assert.equal((await postForm(t, `/dashboard/projects/${two.bId}/switch`, fields, cookie)).status, 403);
        assert.equal((await postForm(t, `/dashboard/projects/${two.bId}/delete`, { ...fields, force: 'true' }, cookie)).status, 403);
      }
      assert.equal((await two.admin('GET', '/projects')).body.data.length, before);
      assert.equal((await two.admin('GET', `/projects/${two.bId}`)).status, 200);
      // With it, the same session switches.
      const switched = await postForm(t, `/dashboard/projects/${two.bId}/switch`, { _csrf: csrf }, cookie);
      assert.deepEqual([switched.status, switched.headers.get('location')], [303, '/dashboard/emails']);
    });

    it('ends the admin’s sessions once MAILROOM_ADMIN_KEY changes', async () => {
      const cookie = cookiesOf(await signIn(t, ADMIN_KEY));
      const open = async (app: TestApp) => (await fetch(`${app.url}/dashboard/projects`, { headers: { cookie, accept: 'text/html' }, redirect: 'manual' })).status;
      assert.equal(await open(t), 200);
      // The same database and secret (the cookie's signature holds), another admin key.
      const rotated = await startApp(dialect, { worker: false, database: t.database, env: { MAILROOM_ADMIN_KEY: `${ADMIN_KEY}2`, MAILROOM_API_KEY: t.token } });
      try {
        assert.equal(await open(rotated), 303, 'sent to sign in');
        assert.equal(await open(t), 200, 'the app still on the old key keeps it');
      } finally {
        await rotated.close();
      }
    });

    it('changes a project, refuses to delete it while it has a key, and deletes it with everything it owns; its browser goes back to the list', async () => {
      const created = await two.admin('POST', '/projects', { name: 'Short-lived' });
      const page = await signedInAs(browser, t, ADMIN_KEY, '/dashboard/projects');
      await page.getByRole('row', { name: /Short-lived/ }).getByRole('button', { name: /Browse/ }).click();
      await page.waitForURL('**/dashboard/emails');
      await page.goto(`/dashboard/projects/${created.body.id}`);
      await page.getByLabel('Name').fill('Short-lived 2');
      await page.getByLabel('Monthly quota').fill('9000');
      await page.getByLabel('Relay (smtp:// or smtps://)').fill('smtps://u:p@relay.example.com:465');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByText('The project was changed.').waitFor();
      const changed = (await two.admin('GET', `/projects/${created.body.id}`)).body;
      assert.deepEqual([changed.name, changed.monthly_quota, changed.has_smtp_url], ['Short-lived 2', 9000, true]);
      assert.ok(!(await page.content()).includes('relay.example.com'), 'the relay is never shown');

      confirming(page);
      await page.getByRole('button', { name: 'Delete project' }).click();
      await page.getByRole('alert').getByText('Not deleted: the project has 0 domains and 1 API key.', { exact: false }).waitFor();
      assert.equal((await two.admin('GET', `/projects/${created.body.id}`)).status, 200, 'refused: still there');
      assert.match((await page.locator('.warning').textContent())!, /removes its 0 domains and 1 API key/);
      confirming(page);
      await page.getByRole('button', { name: 'Delete with everything it owns' }).click();
      await page.getByText('everything else it owned is being removed in the background').waitFor();
      assert.equal(await page.getByRole('link', { name: 'Short-lived 2' }).count(), 0);
      assert.equal((await two.admin('GET', `/projects/${created.body.id}`)).status, 404);
      assert.equal((await new Resend(created.body.api_key.token, { baseUrl: t.url }).domains.list()).error?.name, 'invalid_api_key');
      // The project it browsed is gone: its pages send it to the list.
      await page.goto('/dashboard/emails');
      await page.waitForURL('**/dashboard/projects');
      await page.context().close();
    });
  });
}
