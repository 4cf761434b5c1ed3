import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { AutomationStep } from 'resend';
import { launchBrowser, screenshot, signedIn, withBrowser } from '../support/browser.ts';
import { dialects, eventually, startApp, type TestApp } from '../support/harness.ts';

// The automations pages in a real browser: an automation made through the SDK (a condition branch, a
// delay, and a cycle back through the delay), runs started by events, its graph drawn, a run's steps,
// and Stop.

const DAY = 86_400_000;
const NAME = 'Welcome <script>alert(1)</script>';

interface Box {
  x: number;
  y: number;
  w: number;
  h: number;
  texts: string[];
}

interface Arrow {
  from: string;
  to: string;
  type: string;
  back: boolean;
  label: string;
  start: { x: number; y: number };
  end: { x: number; y: number };
}

// (The test is compiled without the DOM's types: the SVG elements are described by what is used of them.)
type Positioned = { transform: { baseVal: { consolidate(): { matrix: { e: number; f: number } } } } };
type Sized = { width: { baseVal: { value: number } }; height: { baseVal: { value: number } } };
type Path = { getTotalLength(): number; getPointAtLength(length: number): { x: number; y: number } };

/** The drawing as the browser lays it out: each step's box and each connection's path ends, in the SVG's coordinates. */
async function drawing(page: Page): Promise<{ boxes: Record<string, Box>; arrows: Arrow[] }> {
  const boxes = await page.locator('.graph svg g.step').evaluateAll((groups) =>
    Object.fromEntries(
      groups.map((g) => {
        const at = (g as unknown as Positioned).transform.baseVal.consolidate().matrix;
        const rect = g.querySelector('rect') as unknown as Sized;
        const texts = [...g.querySelectorAll('text')].map((t) => t.textContent ?? '');
        return [g.getAttribute('data-key')!, { x: at.e, y: at.f, w: rect.width.baseVal.value, h: rect.height.baseVal.value, texts }];
      }),
    ),
  );
  const arrows = await page.locator('.graph svg g.connection').evaluateAll((groups) =>
    groups.map((g) => {
      const path = g.querySelector('path') as unknown as Path;
      const [start, end] = [path.getPointAtLength(0), path.getPointAtLength(path.getTotalLength())];
      return {
        from: g.getAttribute('data-from')!,
        to: g.getAttribute('data-to')!,
        type: g.getAttribute('data-type')!,
        back: g.classList.contains('back'),
        label: g.querySelector('text')!.textContent ?? '',
        start: { x: start.x, y: start.y },
        end: { x: end.x, y: end.y },
      };
    }),
  );
  return { boxes, arrows };
}

/** Whether a point lies on a box's border (to a pixel). */
const onBorder = (p: { x: number; y: number }, b: Box) =>
  p.x >= b.x - 1 && p.x <= b.x + b.w + 1 && p.y >= b.y - 1 && p.y <= b.y + b.h + 1 &&
  Math.min(Math.abs(p.x - b.x), Math.abs(p.x - b.x - b.w), Math.abs(p.y - b.y), Math.abs(p.y - b.y - b.h)) <= 1;

const overlap = (a: Box, b: Box) => a.x < b.x + b.w && b.x < a.x + a.w && a.y < b.y + b.h && b.y < a.y + a.h;

for (const dialect of dialects) {
  describe(`dashboard: automations (${dialect})`, withBrowser, () => {
    let t: TestApp;
    let browser: Browser;
    let page: Page;
    let id: string;
    let annRun: string;
    let bobRun: string;
    const steps: AutomationStep[] = [];
    const connections = [
      { from: 'start', to: 'welcome', type: 'default' },
      { from: 'welcome', to: 'wait', type: 'default' },
      { from: 'wait', to: 'is_pro', type: 'default' },
      { from: 'is_pro', to: 'pro <tips>', type: 'condition_met' },
      { from: 'is_pro', to: 'upsell', type: 'condition_not_met' },
      // Back to the delay: a cycle, which the delay makes valid.
      { from: 'upsell', to: 'wait', type: 'default' },
    ] as const;
    const runsOf = async () => (await t.resend.automations.runs.list({ automationId: id })).data!.data as { id: string; status: string; email?: string }[];
    const runOf = async (runId: string) => (await t.resend.automations.runs.get({ automationId: id, runId })).data!;

    before(async () => {
      // The worker delivers in capture mode (no SMTP_URL).
      t = await startApp(dialect);
      await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      const template = async (alias: string, subject: string) =>
        (await t.resend.templates.create({ name: alias, alias, from: 'Acme <hello@acme.test>', subject, html: `<p>${subject}</p>` }).publish()).data!.id;
      const [welcome, pro, basic] = [await template('welcome', 'Welcome'), await template('pro', 'Pro tips'), await template('basic', 'Upgrade?')];
      steps.push(
        { key: 'start', type: 'trigger', config: { eventName: 'user.created' } },
        { key: 'welcome', type: 'send_email', config: { template: { id: welcome } } },
        { key: 'wait', type: 'delay', config: { duration: '2 days' } },
        { key: 'is_pro', type: 'condition', config: { type: 'rule', field: 'contact.plan', operator: 'eq', value: 'pro' } },
        { key: 'pro <tips>', type: 'send_email', config: { template: { id: pro } } },
        { key: 'upsell', type: 'send_email', config: { template: { id: basic }, subject: 'Time to upgrade' } },
      );
      const created = await t.resend.automations.create({ name: NAME, status: 'enabled', steps, connections: [...connections] });
      assert.equal(created.error, null, JSON.stringify(created.error));
      id = created.data.id;

      await t.resend.contacts.create({ email: 'ann@example.org', properties: { plan: 'pro' } });
      await t.resend.events.send({ event: 'user.created', email: 'ann@example.org', payload: { name: 'Ann <3' } });
      await t.resend.events.send({ event: 'user.created', email: 'bob@example.org', payload: { name: 'Bob' } });
      const byEmail = async (email: string) => (await runsOf()).find((r) => r.email === email)!.id;
      [annRun, bobRun] = [await byEmail('ann@example.org'), await byEmail('bob@example.org')];
      await eventually(async () => (await runOf(annRun)).steps.at(-1)?.status === 'waiting' && (await runOf(bobRun)).steps.at(-1)?.status === 'waiting');
      // The delay ends: Ann meets the condition and finishes; Bob is sent the upsell and waits again.
      t.advance(2 * DAY + 1000);
      await eventually(async () => (await runOf(annRun)).status === 'completed');
      await eventually(async () => (await runOf(bobRun)).steps.map((s) => s.key).join() === 'start,welcome,wait,is_pro,upsell,wait');

      // After the clock moved: a session lasts 12 hours of it.
      browser = await launchBrowser();
      page = await signedIn(browser, t);
      // Stop asks first (data-confirm): say yes.
      page.on('dialog', (dialog) => void dialog.accept());
    });
    after(async () => {
      await browser?.close();
      await t?.close();
    });

    it('lists automations, filtered by status, a name with <script> shown as text', async () => {
      await t.resend.automations.create({ name: 'Idle', steps: [{ key: 'start', type: 'trigger', config: { eventName: 'never' } }], connections: [] });
      await page.getByRole('link', { name: 'Automations' }).click();
      await page.waitForURL('**/dashboard/automations');
      const row = page.getByRole('row').filter({ hasText: NAME });
      assert.match(await row.innerText(), /enabled/);
      assert.equal(await page.locator('main script').count(), 0, 'the name is text, not markup');
      assert.match(await page.getByRole('row').filter({ hasText: 'Idle' }).innerText(), /disabled/);

      await page.getByLabel('Status').selectOption('disabled');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=disabled/);
      assert.equal(await page.getByRole('row').filter({ hasText: NAME }).count(), 0);
      assert.equal(await page.getByRole('row').filter({ hasText: 'Idle' }).count(), 1);
      await page.getByRole('link', { name: 'Clear' }).click();
      await page.getByRole('link', { name: NAME }).click();
      await page.waitForURL(`**/dashboard/automations/${id}`);
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), NAME);
    });

    it("draws the graph: a box per step, an arrow per connection from box to box with its type, the cycle drawn back up", async () => {
      await page.goto(`/dashboard/automations/${id}`);
      assert.equal(await page.locator('main script').count(), 0);
      assert.match((await page.locator('.graph svg > title').textContent())!, /^The steps of Welcome <script>alert\(1\)<\/script>: 6 steps, 6 connections$/);
      const { boxes, arrows } = await drawing(page);

      assert.deepEqual(Object.keys(boxes).sort(), steps.map((s) => s.key).sort(), 'a box per step, keys as text (escaped)');
      assert.deepEqual(boxes['pro <tips>']!.texts.slice(0, 2), ['pro <tips>', 'send_email']);
      assert.deepEqual(boxes['welcome']!.texts, ['welcome', 'send_email', 'template "welcome"'], 'a template by its name');
      assert.deepEqual(boxes['wait']!.texts, ['wait', 'delay', 'for 2 days']);
      assert.deepEqual(boxes['is_pro']!.texts, ['is_pro', 'condition', 'if contact.plan = "pro"']);
      assert.deepEqual(boxes['start']!.texts, ['start', 'trigger', 'on event user.created']);
      const keys = Object.keys(boxes);
      for (const a of keys) for (const b of keys) if (a < b) assert.equal(overlap(boxes[a]!, boxes[b]!), false, `${a} and ${b} do not overlap`);
      assert.ok(boxes['start']!.y < boxes['welcome']!.y && boxes['welcome']!.y < boxes['wait']!.y && boxes['wait']!.y < boxes['is_pro']!.y, 'each layer under the one before');
      assert.equal(boxes['pro <tips>']!.y, boxes['upsell']!.y, 'the two branches side by side');

      assert.deepEqual(
        arrows.map(({ from, to, type, label }) => ({ from, to, type, label })),
        connections.map((c) => ({ ...c, label: c.type })),
        'an arrow per connection, labelled with its type',
      );
      for (const arrow of arrows) {
        assert.ok(onBorder(arrow.start, boxes[arrow.from]!), `${arrow.from} -> ${arrow.to} starts on ${arrow.from}'s box`);
        assert.ok(onBorder(arrow.end, boxes[arrow.to]!), `${arrow.from} -> ${arrow.to} ends on ${arrow.to}'s box`);
      }
      assert.deepEqual(arrows.filter((a) => a.back).map((a) => `${a.from}->${a.to}`), ['upsell->wait'], 'the edge back to the delay');
      assert.equal(await page.locator('.graph [marker-end]').count(), connections.length);

      const table = page.getByRole('table', { name: 'Steps and where each leads' });
      assert.match(await table.getByRole('row', { name: /^is_pro/ }).innerText(), /condition\s+if contact\.plan = "pro"[\s\S]*pro <tips> condition_met\s+upsell condition_not_met/);
      await screenshot(page, 'automations');
    });

    it("lists the runs and shows a run's steps in order, with their output, and the event that started it", async () => {
      await page.goto(`/dashboard/automations/${id}`);
      const runs = page.getByRole('table', { name: 'Runs, newest first' });
      assert.match(await runs.getByRole('row').filter({ hasText: 'ann@example.org' }).innerText(), /completed/);
      assert.match(await runs.getByRole('row').filter({ hasText: 'bob@example.org' }).innerText(), /running/);
      await page.getByLabel('Run status').selectOption('completed');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/status=completed/);
      assert.equal(await runs.getByRole('row').filter({ hasText: 'bob@example.org' }).count(), 0);

      await runs.getByRole('link', { name: annRun }).click();
      await page.waitForURL(`**/dashboard/automations/${id}/runs/${annRun}`);
      assert.equal(await page.getByRole('heading', { level: 1 }).innerText(), 'Run for ann@example.org');
      const stepRows = page.getByRole('table', { name: 'The steps this run reached, in order' }).locator('tbody tr');
      const shown = await stepRows.evaluateAll((rows) => rows.map((r) => [...r.children].slice(0, 3).map((c) => (c.textContent ?? '').trim())));
      assert.deepEqual(shown, [
        ['start', 'trigger', 'completed'],
        ['welcome', 'send_email', 'completed'],
        ['wait', 'delay', 'completed'],
        ['is_pro', 'condition', 'completed'],
        ['pro <tips>', 'send_email', 'completed'],
      ]);
      const run = await runOf(annRun);
      const emailId = (run.steps[1]!.output as { email_id: string }).email_id;
      assert.deepEqual(JSON.parse(await stepRows.nth(1).locator('pre').innerText()), { email_id: emailId });
      assert.deepEqual(JSON.parse(await stepRows.nth(3).locator('pre').innerText()), { result: true });
      assert.equal(await stepRows.nth(1).getByRole('link', { name: 'The email' }).getAttribute('href'), `/dashboard/emails/${emailId}`);
      const event = page.getByRole('region', { name: 'Event' });
      assert.match(await event.innerText(), /The event user\.created started this run/);
      assert.deepEqual(JSON.parse(await event.locator('pre').innerText()), { name: 'Ann <3' });
      await screenshot(page, 'automation-run');
    });

    it('stops the automation: it shows disabled and its running run cancelled, as the API says', async () => {
      await page.goto(`/dashboard/automations/${id}`);
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.waitForURL(`**/dashboard/automations/${id}?done=stopped`);
      assert.match(await page.getByRole('status').innerText(), /stopped/);
      assert.match(await page.locator('.facts').innerText(), /Status\s+disabled/);
      assert.equal(await page.getByRole('button', { name: 'Stop' }).count(), 0, 'nothing left to stop');
      const runs = page.getByRole('table', { name: 'Runs, newest first' });
      assert.match(await runs.getByRole('row').filter({ hasText: 'bob@example.org' }).innerText(), /cancelled/);
      assert.match(await runs.getByRole('row').filter({ hasText: 'ann@example.org' }).innerText(), /completed/, 'a finished run stays as it was');

      assert.equal((await t.resend.automations.get(id)).data!.status, 'disabled');
      const bob = await runOf(bobRun);
      assert.equal(bob.status, 'cancelled');
      assert.equal(bob.steps.at(-1)!.status, 'cancelled', 'the delay it waited in');

      await runs.getByRole('link', { name: bobRun }).click();
      const last = page.getByRole('table', { name: 'The steps this run reached, in order' }).locator('tbody tr').last();
      assert.match(await last.innerText(), /wait\s+delay\s+cancelled/);
    });
  });
}
