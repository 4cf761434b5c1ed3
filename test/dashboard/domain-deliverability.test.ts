import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import * as emails from '../../src/store/emails.ts';
import { launchBrowser, paintedPixels, screenshot, signedIn, watchErrors, withBrowser } from '../support/browser.ts';
import { publishRecords, startDnsServer, type TestDnsServer } from '../support/dns-server.ts';
import { createDomain, type Domain, sendingHost } from '../support/domain-setup.ts';
import { dialects, eventually, requestJson, startApp, type TestApp } from '../support/harness.ts';

// A domain's deliverability page in a real browser: the checks of a real DNS server's (dns2) answers,
// each with its status and fix and the records to copy; Check now runs them again; the chart of the
// domain's mail (Resend's test addresses, counted by the rollup); the guards' pause with Resume; and
// hostile DNS values shown as text. MAILROOM_GUARD_MIN_SENDS is lowered to 20 so that 20 bounces pause.

const DAY = 24 * 3_600_000;

const valueOf = (domain: Domain, record: string) => domain.records.find((r) => r.record === record && r.type === 'TXT')!.value;

for (const dialect of dialects) {
  describe(`dashboard: a domain's deliverability (${dialect})`, withBrowser, () => {
    let dns: TestDnsServer;
    let t: TestApp;
    let browser: Browser;
    let page: Page;
    const errors: string[] = [];

    before(async () => {
      dns = await startDnsServer();
      t = await startApp(dialect, {
        env: {
          ...sendingHost(dns, 'bl.mailroom.test'),
          MAILROOM_GUARD_MIN_SENDS: '20',
          MAILROOM_GUARD_RECHECK_MS: '60000',
        },
      });
      browser = await launchBrowser();
      page = watchErrors(await signedIn(browser, t), errors);
    });
    after(async () => {
      await browser?.close();
      await t?.close();
      await dns?.close();
    });

    const row = (id: string) => page.locator(`#check-${id}`);

    it('says a domain was never checked; Check now shows each check with its fix and the record to copy, and again after the records are published', async () => {
      const domain = await createDomain(t, 'fresh.test');
      await page.goto(`/dashboard/domains/${domain.id}`);
      await page.getByRole('link', { name: 'Checks, fixes and rates' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}/deliverability`);
      assert.match(await page.locator('#never-checked').innerText(), /Never checked yet/);
      assert.equal(await page.locator('table.checks').count(), 0);

      await page.getByRole('button', { name: 'Check now' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}/deliverability?done=checked`);
      assert.match(await page.getByRole('status').innerText(), /Checked now/);
      assert.equal(await page.locator('#overall').innerText(), 'fail');
      assert.deepEqual(await page.locator('table.checks tbody th').allInnerTexts(), [
        'SPF', 'DKIM', 'DMARC', 'Alignment', 'Return path', 'Reverse DNS (PTR)', 'Forward-confirmed reverse DNS', 'Blocklists', 'MTA-STS', 'TLS-RPT', 'Bulk sender rules', 'Bounce rate', 'Complaint rate', 'DMARC reports',
      ]);
      const spf = row('spf');
      assert.equal(await spf.locator('.status').innerText(), 'fail');
      assert.match(await spf.innerText(), /send\.fresh\.test has no SPF record/);
      assert.match(await spf.locator('td').nth(2).innerText(), new RegExp(`^Publish send\\.fresh\\.test TXT ${valueOf(domain, 'SPF').replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.`));
      const record = spf.locator('.dns-record');
      assert.equal(await record.locator('dd').nth(0).locator('code').innerText(), 'send.fresh.test');
      assert.equal(await record.locator('dd').nth(1).innerText(), 'TXT');
      assert.equal(await record.locator('dd').nth(2).locator('code').innerText(), valueOf(domain, 'SPF'));
      // The Copy button puts the value on the clipboard (app.js).
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write']);
      await record.getByRole('button', { name: 'Copy the TXT value of send.fresh.test' }).click();
      assert.equal(await page.evaluate('navigator.clipboard.readText()'), valueOf(domain, 'SPF'));
      assert.equal(await row('dkim').locator('.dns-record dd').nth(2).locator('code').innerText(), valueOf(domain, 'DKIM'));
      assert.equal(await row('ptr').locator('.status').innerText(), 'pass');
      assert.equal(await row('ptr').locator('td').nth(2).innerText(), '');
      await screenshot(page, 'domain-deliverability');

      publishRecords(dns, domain, ['SPF', 'DKIM']);
      dns.add('_dmarc.fresh.test', { TXT: ['v=DMARC1; p=reject; rua=mailto:dmarc@fresh.test'] });
      await page.getByRole('button', { name: 'Check now' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}/deliverability?done=checked`);
      for (const id of ['spf', 'dkim', 'dmarc', 'alignment']) {
        assert.equal(await row(id).locator('.status').innerText(), 'pass', id);
        assert.equal(await row(id).locator('.dns-record').count(), 0, id);
      }
      assert.match(await row('dmarc').innerText(), /p=reject and sends its reports to mailto:dmarc@fresh\.test/);
      // The page shows the check the API keeps.
      const kept = await requestJson(t, 'GET', `/domains/${domain.id}/deliverability`);
      const shown = await page.locator('table.checks tbody tr').evaluateAll((rows) => rows.map((r) => [r.id.slice('check-'.length), r.querySelector('.status')!.textContent]));
      assert.deepEqual(shown, kept.body.checks.map((c: { id: string; status: string }) => [c.id, c.status]));
      assert.deepEqual(errors, []);
    });

    it("draws the domain's sent and rates per day from its mail, shows the guards' pause, and Resume resumes", async () => {
      const domain = await createDomain(t, 'busy.test');
      // Two days ago: one delivered and one complaint.
      t.advance(-2 * DAY);
      const early = (await t.resend.emails.send({ from: 'ops@busy.test', to: ['delivered@resend.dev', 'complained@resend.dev'], subject: 'a', text: 'a' })).data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, early))?.last_event === 'complained' || undefined, 30_000);
      t.advance(2 * DAY);
      // Today: 20 bounces, enough to trip the guard when a broadcast goes out.
      const bounces = Array.from({ length: 20 }, (_, i) => `bounced+${i}@resend.dev`);
      const late = (await t.resend.emails.send({ from: 'ops@busy.test', to: bounces, subject: 'b', text: 'b' })).data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, late))?.last_event === 'bounced' || undefined, 30_000);
      // Another domain's mail is not this one's.
      const other = (await t.resend.emails.send({ from: 'ops@other.test', to: 'bounced@resend.dev', subject: 'c', text: 'c' })).data!.id;
      await eventually(async () => (await emails.findEmailById(t.ctx.db, other))?.last_event === 'bounced' || undefined, 30_000);
      const segment = (await t.resend.segments.create({ name: 'Readers' })).data!.id;
      await t.resend.contacts.create({ email: 'delivered+reader@resend.dev', segments: [{ id: segment }] });
      await t.resend.broadcasts.create({ segmentId: segment, from: 'news@busy.test', subject: 'News', text: 'Hello', send: true } as never);
      await eventually(async () => ((await t.resend.domains.get(domain.id)).data as { sending_paused: unknown } | null)?.sending_paused ?? undefined, 30_000);

      await page.goto(`/dashboard/domains/${domain.id}/deliverability`);
      const chart = page.locator('#rates-chart');
      await chart.locator('canvas').waitFor();
      assert.equal(await chart.getAttribute('data-drawn'), 'true');
      const painted = await paintedPixels(chart);
      assert.ok(painted > 1000, `painted pixels: ${painted}`);
      const labels = (await page.locator('.u-legend .u-series th').allInnerTexts()).map((l) => l.trim()).filter(Boolean);
      assert.deepEqual(labels.slice(1), ['sent', 'bounce rate', 'complaint rate']);
      const data = JSON.parse((await chart.getAttribute('data-chart'))!);
      assert.equal(data.periods.length, 30);
      assert.deepEqual(data.periods.slice(-3).map((p: number) => new Date(p * 1000).toISOString().slice(0, 10)), [-2, -1, 0].map((d) => new Date(t.clock.now() + d * DAY).toISOString().slice(0, 10)));
      assert.deepEqual(data.series.sent.slice(-3), [2, 0, 20]);
      assert.deepEqual(data.rates.bounce_rate.slice(-3), [0, 0, 1]);
      assert.deepEqual(data.rates.complaint_rate.slice(-3), [0.5, 0, 0]);
      const totals = Object.fromEntries(
        await page.locator('#rates-totals tbody tr').evaluateAll((rows) => rows.map((r) => [r.querySelector('th')!.textContent, r.querySelector('td')!.textContent])),
      );
      assert.deepEqual(totals, { Sent: '22', Bounced: '20', Complained: '1', 'Bounce rate': '90.91%', 'Complaint rate': '50.00%' });

      const banner = page.getByRole('alert');
      assert.match(await banner.innerText(), /Marketing mail paused\s+Bounce rate \d+\.\d\d% \(20 of \d+ sends in the last 24 hours\) is above 4\.00%\. Broadcasts and automations from busy\.test wait since/);
      await screenshot(page, 'domain-deliverability-rates');
      const news = () => t.ctx.db.selectFrom('emails').select('last_event').where('subject', '=', 'News').executeTakeFirst();
      assert.notEqual((await news())?.last_event, 'delivered');
      await banner.getByRole('button', { name: 'Resume marketing mail' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}/deliverability?done=resumed`);
      assert.equal(await page.getByRole('alert').count(), 0);
      assert.match(await page.getByRole('status').innerText(), /Marketing mail resumed/);
      assert.equal(((await t.resend.domains.get(domain.id)).data as unknown as { sending_paused: unknown }).sending_paused, null);
      t.advance(60_000);
      await eventually(async () => (await news())?.last_event === 'delivered' || undefined, 30_000);
      assert.deepEqual(errors, []);
    });

    it("refuses Check now and Resume without the session's CSRF token, and Resume returns to no page its form names", async () => {
      const domain = await createDomain(t, 'forms.test');
      const base = `/dashboard/domains/${domain.id}`;
      for (const path of [`${base}/deliverability`, `${base}/resume`]) {
        const refused = await page.request.post(path, { form: { _csrf: 'forged' }, maxRedirects: 0 });
        assert.equal(refused.status(), 403, path);
        assert.match(await refused.text(), /did not come from the dashboard/, path);
      }
      assert.equal((await t.ctx.db.selectFrom('domain_deliverability').select('domain_id').where('domain_id', '=', domain.id).execute()).length, 0);
      await page.goto(`${base}/deliverability`);
      const csrf = (await page.locator('meta[name="csrf-token"]').getAttribute('content'))!;
      const resumed = await page.request.post(`${base}/resume`, { form: { _csrf: csrf, back: '//evil.test/x' }, maxRedirects: 0 });
      assert.equal(resumed.status(), 303);
      assert.equal(resumed.headers().location, `${base}?done=resumed`);
    });

    it('shows hostile DNS values as text, in details, fixes and the records to copy', async () => {
      const domain = await createDomain(t, 'hostile.test');
      const script = '<script>document.title="pwned"</script>';
      dns.add('_dmarc.hostile.test', { TXT: [`v=DMARC1; p=reject; rua=mailto:x@hostile.test${script}`] });
      dns.add('_mta-sts.hostile.test', { TXT: [`v=STSv1; id=${script}`, 'v=STSv1; id=2'] });
      await page.goto(`/dashboard/domains/${domain.id}/deliverability`);
      await page.getByRole('button', { name: 'Check now' }).click();
      await page.waitForURL(`**/dashboard/domains/${domain.id}/deliverability?done=checked`);
      assert.match(await row('dmarc').locator('td').nth(1).innerText(), new RegExp(`mailto:x@hostile\\.test${script.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
      const copied = row('mta_sts').locator('.dns-record dd').nth(2);
      assert.equal(await copied.locator('code').innerText(), `v=STSv1; id=${script}`);
      assert.equal(await copied.getByRole('button').getAttribute('data-copy'), `v=STSv1; id=${script}`);
      assert.equal(await page.locator('main script').count(), 0);
      assert.equal(await page.title(), 'Deliverability of hostile.test · Mailroom');
      assert.deepEqual(errors, []);
    });

    // Last: it moves the clock a month on, past the session the other tests share.
    it('starts a warm-up from the form, draws its curve with today marked as the days pass, and ends it', async () => {
      const domain = await createDomain(t, 'warm.test');
      const base = `/dashboard/domains/${domain.id}/deliverability`;
      await page.goto(base);
      assert.match(await page.locator('#no-warmup').innerText(), /No warm-up/);
      await page.getByLabel('Messages on the first day', { exact: true }).fill('50');
      await page.getByLabel('Days to no limit').fill('30');
      await page.getByRole('button', { name: 'Start warm-up' }).click();
      await page.waitForURL(`**${base}?done=warmup`);
      const started = (await t.resend.domains.get(domain.id)).data as unknown as { warmup: { start: number; days: number } };
      assert.deepEqual([started.warmup.start, started.warmup.days], [50, 30]);

      // The session lasts hours: each day is a new sign-in.
      const dayPage = async () => {
        const fresh = await signedIn(browser, t);
        await fresh.goto(base);
        return fresh;
      };
      const curve = async (on: Page) => {
        const chart = on.locator('#warmup-chart');
        await chart.locator('canvas').waitFor();
        assert.equal(await chart.getAttribute('data-drawn'), 'true');
        return JSON.parse((await chart.getAttribute('data-chart'))!) as { series: { daily_volume: number[] }; marks: { today: (number | null)[] } };
      };
      const marked = (points: (number | null)[]) => points.flatMap((volume, day) => (volume === null ? [] : [day]));
      const first = await curve(page);
      assert.equal(first.series.daily_volume.length, 30);
      assert.deepEqual([first.series.daily_volume[0], first.series.daily_volume[29]], [50, 100_000]);
      assert.deepEqual(marked(first.marks.today), [0]);
      assert.match(await page.locator('#warmup-today').innerText(), /^Today is day 1 of 30: up to 50 messages\./);

      t.advance(3 * DAY);
      const fourth = await dayPage();
      const later = await curve(fourth);
      assert.deepEqual(marked(later.marks.today), [3]);
      await screenshot(fourth, 'domain-deliverability-warmup');
      assert.match(await fourth.locator('#warmup-today').innerText(), new RegExp(`^Today is day 4 of 30: up to ${later.series.daily_volume[3]} messages\\.`));
      await fourth.close();
      t.advance(27 * DAY);
      const last = await dayPage();
      assert.match(await last.locator('#warmup-today').innerText(), /^Finished: no limit since day 31\./);

      await last.getByRole('button', { name: 'End warm-up' }).click();
      await last.waitForURL(`**${base}?done=warmup-ended`);
      assert.equal(((await t.resend.domains.get(domain.id)).data as unknown as { warmup: unknown }).warmup, null);
      assert.equal(await last.locator('#no-warmup').count(), 1);

      // What is not a whole number is refused as the API refuses it.
      const start = last.getByLabel('Messages on the first day', { exact: true });
      await start.evaluate((input) => (input as unknown as { min: string }).min = '');
      await start.fill('0');
      await last.getByRole('button', { name: 'Start warm-up' }).click();
      assert.match(await last.locator('main').innerText(), /warmup\.start/);
      await last.close();
      assert.deepEqual(errors, []);
    });
  });
}
