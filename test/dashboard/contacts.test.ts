import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, requestJson, startApp, type TestApp } from '../support/harness.ts';

// The contacts section in a real browser: what the SDK creates shows in the pages, and what the pages
// change is what the API then answers.

for (const dialect of dialects) {
  describe(`dashboard: contacts, segments, topics, properties (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let browser: Browser;
    let page: Page;
    let readers: string;
    let vip: string;
    let news: string;
    let ada: string;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      browser = await launchBrowser();
      page = await signedIn(browser, t);
      readers = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      vip = (await t.resend.segments.create({ name: 'VIP' })).data!.id;
      news = (await t.resend.topics.create({ name: 'Product news', description: 'What ships', defaultSubscription: 'opt_out' })).data!.id;
      await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      await t.resend.contacts.create({ email: 'grace@navy.example.org', firstName: 'Grace', lastName: 'Hopper' });
      ada = (
        await t.resend.contacts.create({
          email: 'ada@example.com',
          firstName: '<b>Ada</b>',
          lastName: 'Lovelace',
          properties: { plan: 'pro' },
          segments: [{ id: readers }],
          topics: [{ id: news, subscription: 'opt_in' }],
        })
      ).data!.id;
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    const listedEmails = () => page.locator('table.list tbody tr td:first-child').allTextContents();

    it('lists contacts newest first, and the search finds one by part of its email, in any case', async () => {
      await page.getByRole('link', { name: 'Contacts', exact: true }).first().click();
      await page.waitForURL('**/dashboard/contacts');
      assert.deepEqual(await listedEmails(), ['ada@example.com', 'grace@navy.example.org']);
      await screenshot(page, 'contacts-list');
      await page.getByLabel('Email contains').fill('NAVY.EX');
      await page.getByRole('button', { name: 'Search' }).click();
      await page.waitForURL('**/dashboard/contacts?email=*');
      assert.deepEqual(await listedEmails(), ['grace@navy.example.org']);
      await page.getByLabel('Email contains').fill('%');
      await page.getByRole('button', { name: 'Search' }).click();
      assert.equal(await page.locator('table.list tbody').textContent(), 'No contacts.');
    });

    it("shows a contact's fields, property values, segments and topics, escaped", async () => {
      await page.goto('/dashboard/contacts');
      await page.getByRole('link', { name: 'ada@example.com' }).click();
      await page.waitForURL(`**/dashboard/contacts/${ada}`);
      const facts = page.locator('dl.facts');
      assert.match((await facts.textContent())!, /<b>Ada<\/b> Lovelace/);
      assert.equal(await page.locator('dl.facts b').count(), 0);
      assert.match((await facts.textContent())!, /plan\s*pro/);
      assert.deepEqual(await page.locator('.memberships a').allTextContents(), ['Readers']);
      assert.equal(await page.getByLabel('Subscription to Product news').inputValue(), 'opt_in');
      assert.equal(await page.getByLabel('First name').inputValue(), '<b>Ada</b>');
      await screenshot(page, 'contact-detail');
    });

    it('saves names, the unsubscribed flag, property values and topic subscriptions as the API sees them', async () => {
      await page.goto(`/dashboard/contacts/${ada}`);
      await page.getByLabel('First name').fill('Augusta Ada');
      await page.getByLabel('Unsubscribed from all email').check();
      await page.getByLabel(/^plan/).fill('enterprise');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const { data: contact } = await t.resend.contacts.get(ada);
      assert.equal(contact!.first_name, 'Augusta Ada');
      assert.equal(contact!.last_name, 'Lovelace');
      assert.equal(contact!.unsubscribed, true);
      assert.deepEqual(contact!.properties, { plan: { value: 'enterprise', type: 'string' } });

      await page.getByLabel('Subscription to Product news').selectOption('opt_out');
      await page.getByRole('button', { name: 'Save subscriptions' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      const { data: topics } = await t.resend.contacts.topics.list({ id: ada });
      assert.deepEqual(topics!.data.map((s) => [s.id, s.subscription]), [[news, 'opt_out']]);
    });

    it('refuses a value of the wrong type with the API message, and changes nothing', async () => {
      await t.resend.contactProperties.create({ key: 'seats', type: 'number' });
      await page.goto(`/dashboard/contacts/${ada}`);
      await page.getByLabel(/^seats/).fill('many');
      await page.getByRole('button', { name: 'Save', exact: true }).click();
      assert.match((await page.locator('main').textContent())!, /expected a number/);
      const { data: contact } = await t.resend.contacts.get(ada);
      assert.equal(contact!.properties.seats, undefined);
    });

    it('adds a contact to a segment and removes it', async () => {
      await page.goto(`/dashboard/contacts/${ada}`);
      await page.getByRole('combobox', { name: /^Segment/ }).selectOption(vip);
      await page.getByRole('button', { name: 'Add to segment' }).click();
      await page.getByRole('status').filter({ hasText: 'Added' }).waitFor();
      const segmentsOf = async () => (await t.resend.contacts.segments.list({ contactId: ada })).data!.data.map((s) => s.name).sort();
      assert.deepEqual(await segmentsOf(), ['Readers', 'VIP']);
      await page.getByRole('button', { name: 'Remove from Readers' }).click();
      await page.getByRole('status').filter({ hasText: 'Removed' }).waitFor();
      assert.deepEqual(await segmentsOf(), ['VIP']);
    });

    it('creates a segment in the pages, lists its contacts, and deletes it', async () => {
      await page.goto('/dashboard/contacts/segments');
      await page.getByLabel('Name').fill('Early adopters');
      await page.getByRole('button', { name: 'Create segment' }).click();
      await page.getByRole('heading', { name: 'Early adopters' }).waitFor();
      const created = (await t.resend.segments.list()).data!.data.find((s) => s.name === 'Early adopters');
      assert.ok(created);
      await t.resend.contacts.segments.add({ contactId: ada, segmentId: created.id });
      await page.reload();
      assert.deepEqual(await listedEmails(), ['ada@example.com']);
      await screenshot(page, 'segment');
      await page.goto('/dashboard/contacts/segments');
      await screenshot(page, 'segments');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Delete Early adopters' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted.' }).waitFor();
      assert.equal((await t.resend.segments.list()).data!.data.some((s) => s.name === 'Early adopters'), false);
    });

    it('creates and edits a topic in the pages', async () => {
      await page.goto('/dashboard/contacts/topics');
      await page.getByLabel('Name').fill('Events');
      await page.getByLabel('Description').fill('Meetups & talks');
      await page.getByLabel(/Default subscription/).selectOption('opt_in');
      await page.getByLabel('Visibility').selectOption('public');
      await page.getByRole('button', { name: 'Create topic' }).click();
      await page.getByRole('heading', { name: 'Events' }).waitFor();
      const created = (await t.resend.topics.list()).data!.data.find((topic) => topic.name === 'Events');
      assert.ok(created);
      const { body: topic } = await requestJson(t, 'GET', `/topics/${created.id}`);
      assert.deepEqual([topic.description, topic.default_subscription, topic.visibility], ['Meetups & talks', 'opt_in', 'public']);
      await page.getByLabel('Name').fill('Events and meetups');
      await page.getByRole('button', { name: 'Save' }).click();
      await page.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
      assert.equal((await t.resend.topics.get(created.id)).data!.name, 'Events and meetups');
      await page.goto('/dashboard/contacts/topics');
      await screenshot(page, 'topics');
    });

    it('creates a contact property with a fallback, and deletes one', async () => {
      await page.goto('/dashboard/contacts/properties');
      await page.getByLabel(/^Key/).fill('score');
      await page.getByLabel('Type').selectOption('number');
      await page.getByLabel(/Fallback value/).fill('7');
      await page.getByRole('button', { name: 'Create property' }).click();
      await page.getByRole('status').filter({ hasText: 'Created.' }).waitFor();
      const listed = (await t.resend.contactProperties.list()).data!.data;
      assert.deepEqual(
        listed.filter((p) => p.key === 'score').map((p) => [p.type, p.fallbackValue]),
        [['number', 7]],
      );
      await screenshot(page, 'contact-properties');
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: 'Delete seats' }).click();
      await page.getByRole('status').filter({ hasText: 'Deleted.' }).waitFor();
      assert.equal((await t.resend.contactProperties.list()).data!.data.some((p) => p.key === 'seats'), false);
    });

    it('adds a contact and deletes it after asking', async () => {
      await page.goto('/dashboard/contacts');
      await page.getByLabel('Email', { exact: true }).fill('Linus@Example.net');
      await page.getByLabel('First name').fill('Linus');
      await page.getByRole('button', { name: 'Add contact' }).click();
      await page.getByRole('heading', { name: 'linus@example.net' }).waitFor();
      const { data: created } = await t.resend.contacts.get('linus@example.net');
      assert.equal(created!.first_name, 'Linus');
      let asked = '';
      page.once('dialog', (dialog) => {
        asked = dialog.message();
        void dialog.accept();
      });
      await page.getByRole('button', { name: 'Delete this contact' }).click();
      await page.waitForURL('**/dashboard/contacts?done=deleted');
      assert.match(asked, /linus@example\.net/);
      assert.equal((await t.resend.contacts.get('linus@example.net')).error?.statusCode, 404);
    });
  });
}
