import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import type { AutomationStep, CreateAutomationOptions } from 'resend';
import { dialects, eventually, startApp, type TestApp } from '../../support/harness.ts';
import { nothingLeftToDo } from '../../support/jobs.ts';
import { startSmtpServer, type TestSmtpServer } from '../../support/smtp-server.ts';

// Automations end to end through the SDK: events start runs, steps send templates to a real SMTP sink,
// delays and waits are jobs due later (the test clock moves them), conditions branch.

const DAY = 86_400_000;

for (const dialect of dialects) {
  describe(`automations (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    let welcome: string;
    let pro: string;
    let basic: string;

    before(async () => {
      smtp = await startSmtpServer();
      t = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
      await t.resend.contactProperties.create({ key: 'plan', type: 'string' });
      const template = async (alias: string, subject: string, html: string, variables: { key: string; type: 'string'; fallbackValue?: string }[] = []) => {
        const { data, error } = await t.resend.templates.create({ name: alias, alias, from: 'Acme <hello@acme.test>', subject, html, variables }).publish();
        assert.equal(error, null);
        return data.id;
      };
      welcome = await template('welcome', 'Welcome, {{{NAME}}}', '<p>Hello {{{NAME}}}, you chose {{{PLAN}}}.</p>', [
        { key: 'NAME', type: 'string' },
        { key: 'PLAN', type: 'string', fallbackValue: 'free' },
      ]);
      pro = await template('pro', 'Pro tips', '<p>Pro tips</p>');
      basic = await template('basic', 'Upgrade?', '<p>Upgrade to pro</p>');
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });
    afterEach(() => {
      smtp.messages.length = 0;
    });

    const received = (to: string) => smtp.messages.filter((m) => m.to.includes(to));
    const runsOf = async (automationId: string) => (await t.resend.automations.runs.list({ automationId })).data!.data;
    const runOf = async (automationId: string, runId: string) => (await t.resend.automations.runs.get({ automationId, runId })).data!;
    async function create(options: Omit<CreateAutomationOptions, 'status'>) {
      const { data, error } = await t.resend.automations.create({ status: 'enabled', ...options });
      assert.equal(error, null, JSON.stringify(error));
      return data.id;
    }

    it('runs a welcome series: send, delay 2 days, a condition on a property, then the branch it meets', async () => {
      const steps: AutomationStep[] = [
        { key: 'start', type: 'trigger', config: { eventName: 'user.created' } },
        { key: 'welcome', type: 'send_email', config: { template: { id: welcome, variables: { NAME: { var: 'event.name' }, PLAN: { var: 'event.plan' } } } } },
        { key: 'wait', type: 'delay', config: { duration: '2 days' } },
        { key: 'is_pro', type: 'condition', config: { type: 'rule', field: 'contact.plan', operator: 'eq', value: 'pro' } },
        { key: 'pro_tips', type: 'send_email', config: { template: { id: pro } } },
        { key: 'upsell', type: 'send_email', config: { template: { id: basic }, subject: 'Time to upgrade' } },
      ];
      const id = await create({
        name: 'Welcome series',
        steps,
        connections: [
          { from: 'start', to: 'welcome' },
          { from: 'welcome', to: 'wait' },
          { from: 'wait', to: 'is_pro' },
          { from: 'is_pro', to: 'pro_tips', type: 'condition_met' },
          { from: 'is_pro', to: 'upsell', type: 'condition_not_met' },
        ],
      });
      const got = (await t.resend.automations.get(id)).data!;
      assert.equal(got.status, 'enabled');
      assert.deepEqual(got.steps.map((s) => s.key), steps.map((s) => s.key));
      assert.equal(got.connections[0]!.type, 'default', 'a connection without a type is a default one');

      await t.resend.contacts.create({ email: 'ann@example.org', properties: { plan: 'pro' } });
      const sent = await t.resend.events.send({ event: 'user.created', email: 'ann@example.org', payload: { name: 'Ann <3', plan: 'pro' } });
      assert.deepEqual(sent.data, { object: 'event', event: 'user.created' });
      // No contact yet: the run creates it, as Resend does.
      await t.resend.events.send({ event: 'user.created', email: 'bob@example.org', payload: { name: 'Bob' } });

      await eventually(() => received('ann@example.org').length === 1 && received('bob@example.org').length === 1);
      const annWelcome = received('ann@example.org')[0]!.parsed;
      assert.equal(annWelcome.subject, 'Welcome, Ann <3');
      assert.match(annWelcome.html as string, /Hello Ann &lt;3, you chose pro\./, 'the event payload rendered, escaped in html');
      assert.match(received('bob@example.org')[0]!.parsed.html as string, /you chose free/, "the template's fallback when the payload has no value");
      const bob = (await t.resend.contacts.get({ email: 'bob@example.org' })).data!;
      assert.equal(bob.email, 'bob@example.org');

      const [bobRun, annRun] = await runsOf(id);
      assert.equal(annRun!.status, 'running');
      const waiting = await runOf(id, annRun!.id);
      assert.deepEqual(waiting.steps.map((s) => [s.key, s.status]), [['start', 'completed'], ['welcome', 'completed'], ['wait', 'waiting']]);
      assert.ok((waiting.steps[1]!.output as { email_id: string }).email_id);

      t.advance(DAY);
      await nothingLeftToDo(t);
      assert.equal(smtp.messages.length, 2, 'nothing more before the delay ends');

      t.advance(DAY + 1000);
      await eventually(async () => (await runsOf(id)).every((r) => r.status === 'completed'));
      await eventually(() => received('ann@example.org').length === 2 && received('bob@example.org').length === 2);
      assert.deepEqual(received('ann@example.org').map((m) => m.parsed.subject), ['Welcome, Ann <3', 'Pro tips']);
      assert.deepEqual(received('bob@example.org').map((m) => m.parsed.subject), ['Welcome, Bob', 'Time to upgrade']);
      const done = await runOf(id, annRun!.id);
      assert.deepEqual(done.steps.map((s) => [s.key, s.status]), [['start', 'completed'], ['welcome', 'completed'], ['wait', 'completed'], ['is_pro', 'completed'], ['pro_tips', 'completed']]);
      assert.deepEqual(done.steps[3]!.output, { result: true });
      assert.ok(done.completed_at);
      assert.equal((await runOf(id, bobRun!.id)).steps.at(-1)!.key, 'upsell');
    });

    it("lists a run's steps and reads one, in Resend's automation_run_step shape with the step's config", async () => {
      const id = await create({
        name: 'Steps',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'steps.started' } },
          { key: 'pause', type: 'delay', config: { duration: '1 day' } },
        ],
        connections: [{ from: 'start', to: 'pause' }],
      });
      await t.resend.events.send({ event: 'steps.started', email: 'eve@example.org' });
      const run = await eventually(async () => (await runsOf(id))[0]);
      const path = `/automations/${id}/runs/${run.id}/steps`;
      const list = await t.resend.get<{ object: string; has_more: boolean; data: Record<string, unknown>[] }>(path);
      assert.equal(list.error, null, JSON.stringify(list.error));
      assert.deepEqual([list.data.object, list.data.has_more], ['list', false]);
      const graph = (await t.resend.automations.get(id)).data!.steps;
      const [pause, start] = list.data.data;
      assert.deepEqual(
        [start, pause].map((step) => [step!.object, step!.key, step!.type, step!.status, step!.config]),
        [
          ['automation_run_step', 'start', 'trigger', 'completed', graph[0]!.config],
          ['automation_run_step', 'pause', 'delay', 'waiting', graph[1]!.config],
        ],
        'newest first',
      );
      const one = await t.resend.get<Record<string, unknown>>(`${path}/${String(pause!.step_id)}`);
      assert.deepEqual(one.data, pause);
      assert.equal((await t.resend.get<{ has_more: boolean }>(`${path}?limit=1`)).data?.has_more, true);
      assert.equal((await t.resend.get(`${path}/0190c0de-0000-7000-8000-000000000000`)).error?.statusCode, 404);
      assert.equal((await t.resend.get(`/automations/${id}/runs/0190c0de-0000-7000-8000-000000000000/steps`)).error?.statusCode, 404);
    });

    it('a wait_for_event takes the event_received branch when its event comes, the timeout branch when it does not', async () => {
      const id = await create({
        name: 'Verify reminder',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'signup' } },
          { key: 'verified', type: 'wait_for_event', config: { eventName: 'email.verified', timeout: '1 day', filterRule: { type: 'rule', field: 'event.method', operator: 'eq', value: 'link' } } },
          { key: 'thanks', type: 'send_email', config: { template: { id: pro }, subject: 'Thanks for verifying' } },
          { key: 'remind', type: 'send_email', config: { template: { id: basic }, subject: 'Please verify' } },
        ],
        connections: [
          { from: 'start', to: 'verified' },
          { from: 'verified', to: 'thanks', type: 'event_received' },
          { from: 'verified', to: 'remind', type: 'timeout' },
        ],
      });
      await t.resend.events.send({ event: 'signup', email: 'cat@example.org' });
      await t.resend.events.send({ event: 'signup', email: 'dan@example.org' });
      await eventually(async () => (await runsOf(id)).length === 2);
      // An event that does not pass the filter leaves the wait as it is.
      await t.resend.events.send({ event: 'email.verified', email: 'cat@example.org', payload: { method: 'code' } });
      await t.resend.events.send({ event: 'email.verified', email: 'cat@example.org', payload: { method: 'link' } });
      await eventually(() => received('cat@example.org').length === 1);
      assert.equal(received('cat@example.org')[0]!.parsed.subject, 'Thanks for verifying');
      // A day on, a job still running looks abandoned and would be taken again: wait for the send's end first.
      await eventually(async () => (await t.ctx.db.selectFrom('jobs').select('id').where('task', '=', 'send-email').execute()).length === 0);

      t.advance(DAY + 1000);
      await eventually(() => received('dan@example.org').length === 1);
      assert.equal(received('dan@example.org')[0]!.parsed.subject, 'Please verify');
      await eventually(async () => (await runsOf(id)).every((r) => r.status === 'completed'));
      const runs = await runsOf(id);
      const cat = await runOf(id, runs.find((r) => (r as { email?: string }).email === 'cat@example.org')!.id);
      assert.deepEqual(cat.steps[1]!.output, { event: 'email.verified', payload: { method: 'link' } });
      const dan = await runOf(id, runs.find((r) => (r as { email?: string }).email === 'dan@example.org')!.id);
      assert.deepEqual(dan.steps[1]!.output, { timed_out: true });
      assert.equal(received('cat@example.org').length, 1, 'the timeout of an ended wait does nothing');
    });

    it('stop cancels the pending steps of runs in progress; a disabled automation starts no run', async () => {
      const id = await create({
        name: 'Drip',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'drip.start' } },
          { key: 'later', type: 'delay', config: { duration: '3 days' } },
          { key: 'mail', type: 'send_email', config: { template: { id: pro } } },
        ],
        connections: [{ from: 'start', to: 'later' }, { from: 'later', to: 'mail' }],
      });
      await t.resend.events.send({ event: 'drip.start', email: 'eve@example.org' });
      const [run] = await runsOf(id);
      const stopped = await t.resend.automations.stop(id);
      assert.deepEqual(stopped.data, { object: 'automation', id, status: 'disabled' });
      const cancelled = await runOf(id, run!.id);
      assert.equal(cancelled.status, 'cancelled');
      assert.deepEqual(cancelled.steps.map((s) => [s.key, s.status]), [['start', 'completed'], ['later', 'cancelled']]);
      const jobs = await t.ctx.db.selectFrom('jobs').select('key').where('task', '=', 'automation-step').execute();
      assert.equal(jobs.length, 0, 'the delay job is gone');
      t.advance(4 * DAY);
      await t.resend.events.send({ event: 'drip.start', email: 'eve@example.org' });
      await nothingLeftToDo(t);
      assert.equal(received('eve@example.org').length, 0);
      assert.equal((await runsOf(id)).length, 1);
      assert.deepEqual((await t.resend.automations.runs.list({ automationId: id, status: 'cancelled' })).data!.data.map((r) => r.id), [run!.id]);
    });

    it('sends nothing to an unsubscribed or suppressed contact, and the step says why', async () => {
      const id = await create({
        name: 'Notify',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'notify' } },
          { key: 'mail', type: 'send_email', config: { template: { id: pro } } },
        ],
        connections: [{ from: 'start', to: 'mail' }],
      });
      await t.resend.contacts.create({ email: 'gone@example.org', unsubscribed: true });
      await t.resend.suppressions.add({ email: 'bounced@example.org' });
      await t.resend.events.send({ event: 'notify', email: 'gone@example.org' });
      await t.resend.events.send({ event: 'notify', email: 'bounced@example.org' });
      await eventually(async () => (await runsOf(id)).filter((r) => r.status === 'completed').length === 2);
      for (const run of await runsOf(id)) {
        const step = (await runOf(id, run.id)).steps[1]!;
        assert.equal(step.status, 'skipped');
        assert.match((step.output as { reason: string }).reason, /unsubscribed|suppress/i);
      }
      assert.equal(received('gone@example.org').length + received('bounced@example.org').length, 0);
    });

    it('fails a run whose email cannot be made (a variable with no value), and says why', async () => {
      const strict = (await t.resend.templates.create({ name: 'strict', from: 'a@acme.test', subject: 'Hi {{{CODE}}}', html: '<p>{{{CODE}}}</p>', variables: [{ key: 'CODE', type: 'string' }] }).publish()).data!.id;
      const id = await create({
        name: 'Strict',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'code' } },
          { key: 'mail', type: 'send_email', config: { template: { id: strict, variables: { CODE: { var: 'event.code' } } } } },
          { key: 'after', type: 'send_email', config: { template: { id: pro } } },
        ],
        connections: [{ from: 'start', to: 'mail' }, { from: 'mail', to: 'after' }],
      });
      await t.resend.events.send({ event: 'code', email: 'ida@example.org', payload: {} });
      await t.resend.events.send({ event: 'code', email: 'jay@example.org', payload: { code: 'A1' } });
      await eventually(async () => (await runsOf(id)).every((r) => r.status !== 'running'));
      const runs = await runsOf(id);
      const ida = await runOf(id, runs.find((r) => (r as { email?: string }).email === 'ida@example.org')!.id);
      assert.equal(ida.status, 'failed');
      assert.deepEqual(ida.steps.map((s) => [s.key, s.status]), [['start', 'completed'], ['mail', 'failed']]);
      assert.match((ida.steps[1]!.error as { message: string }).message, /CODE/);
      await eventually(() => received('jay@example.org').length === 2);
      assert.equal(received('ida@example.org').length, 0);
    });

    it('versions: a run in progress finishes on the graph it started with', async () => {
      const id = await create({
        name: 'Versioned',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'v.start' } },
          { key: 'later', type: 'delay', config: { duration: '1 hour' } },
          { key: 'mail', type: 'send_email', config: { template: { id: pro }, subject: 'Version 1' } },
        ],
        connections: [{ from: 'start', to: 'later' }, { from: 'later', to: 'mail' }],
      });
      await t.resend.events.send({ event: 'v.start', email: 'fay@example.org' });
      const updated = await t.resend.automations.update(id, {
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'v.start' } },
          { key: 'mail', type: 'send_email', config: { template: { id: pro }, subject: 'Version 2' } },
        ],
        connections: [{ from: 'start', to: 'mail' }],
      });
      assert.equal(updated.error, null);
      await t.resend.events.send({ event: 'v.start', email: 'gus@example.org' });
      await eventually(() => received('gus@example.org').length === 1);
      t.advance(3_600_000 + 1000);
      await eventually(() => received('fay@example.org').length === 1);
      assert.equal(received('fay@example.org')[0]!.parsed.subject, 'Version 1');
      assert.equal(received('gus@example.org')[0]!.parsed.subject, 'Version 2');
      const copy = await t.resend.automations.duplicate(id);
      const copied = (await t.resend.automations.get(copy.data!.id)).data!;
      assert.equal(copied.name, 'Versioned (copy)');
      assert.equal(copied.status, 'disabled');
      assert.equal(copied.steps.length, 2);
      assert.deepEqual((await t.resend.automations.remove(copy.data!.id)).data, { object: 'automation', id: copy.data!.id, deleted: true });
      assert.equal((await t.resend.automations.get(copy.data!.id)).error?.statusCode, 404);
    });

    it('contact steps: update (with event values), add to a segment, delete', async () => {
      const segment = (await t.resend.segments.create({ name: 'Trial' })).data!.id;
      const id = await create({
        name: 'Contact steps',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'trial' } },
          { key: 'update', type: 'contact_update', config: { firstName: { var: 'event.first' }, properties: { plan: 'trial' } } },
          { key: 'segment', type: 'add_to_segment', config: { segmentId: segment } },
          { key: 'wait', type: 'wait_for_event', config: { eventName: 'trial.ended' } },
          { key: 'remove', type: 'contact_delete', config: {} },
        ],
        connections: [{ from: 'start', to: 'update' }, { from: 'update', to: 'segment' }, { from: 'segment', to: 'wait' }, { from: 'wait', to: 'remove', type: 'event_received' }],
      });
      await t.resend.events.send({ event: 'trial', email: 'hal@example.org', payload: { first: 'Hal' } });
      await eventually(async () => (await t.resend.contacts.segments.list({ email: 'hal@example.org' })).data?.data.length === 1);
      const hal = (await t.resend.contacts.get({ email: 'hal@example.org' })).data!;
      assert.equal(hal.first_name, 'Hal');
      assert.equal((hal.properties as Record<string, { value: unknown }>).plan!.value, 'trial');
      await t.resend.events.send({ event: 'trial.ended', contactId: hal.id });
      await eventually(async () => (await t.resend.contacts.get({ email: 'hal@example.org' })).error?.statusCode === 404);
      const [run] = await runsOf(id);
      await eventually(async () => (await runOf(id, run!.id)).status === 'completed');
    });
  });

  describe(`automations and events: the API's refusals (${dialect})`, () => {
    let t: TestApp;
    let template: string;
    before(async () => {
      t = await startApp(dialect, { worker: false });
      template = (await t.resend.templates.create({ name: 'x', from: 'a@acme.test', subject: 's', html: '<p>x</p>' }).publish()).data!.id;
    });
    after(() => t.close());

    const post = async (path: string, body: unknown) => {
      const response = await t.fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as { name: string; message: string } };
    };
    const trigger = { key: 'start', type: 'trigger', config: { event_name: 'go' } };
    const mail = (key: string) => ({ key, type: 'send_email', config: { template: { id: template } } });
    const refused = async (steps: unknown[], connections: unknown[], named: RegExp) => {
      const answer = await post('/automations', { name: 'bad', steps, connections });
      assert.equal(answer.status, 422, JSON.stringify(answer.body));
      assert.equal(answer.body.name, 'validation_error');
      assert.match(answer.body.message, named);
    };

    it('refuses an invalid graph, naming the step', async () => {
      await refused([trigger, mail('a'), mail('a')], [], /step `a`.*same key/);
      await refused([mail('a')], [], /exactly one `trigger`/);
      await refused([trigger, { ...trigger, key: 'again' }], [], /exactly one `trigger`.*start, again/);
      await refused([trigger, mail('a')], [{ from: 'start', to: 'nowhere' }], /connections\[0\].*nowhere/);
      await refused([trigger, mail('a')], [], /step `a`: no connection leads to it/);
      await refused([trigger, mail('a'), mail('b')], [{ from: 'start', to: 'a' }, { from: 'a', to: 'b' }, { from: 'b', to: 'a' }], /step `[ab]`.*cycle/);
      await refused([trigger, mail('a'), { key: 'd', type: 'delay', config: { duration: 'soon' } }], [{ from: 'start', to: 'a' }, { from: 'a', to: 'd' }], /step `d`.*duration/);
      await refused([trigger, { key: 'm', type: 'send_email', config: { template: { id: 'missing' } } }], [{ from: 'start', to: 'm' }], /step `m`.*no published template/);
      const bare = (await t.resend.templates.create({ name: 'bare', html: '<p>x</p>' }).publish()).data!.id;
      await refused([trigger, { key: 'm', type: 'send_email', config: { template: { id: bare } } }], [{ from: 'start', to: 'm' }], /step `m`: no `from`/);
      await refused([trigger, { key: 'c', type: 'condition', config: { type: 'rule', field: 'plan', operator: 'eq', value: 1 } }], [{ from: 'start', to: 'c' }], /step `c`.*event\.` or `contact\./);
      await refused([trigger, mail('a')], [{ from: 'start', to: 'a', type: 'timeout' }], /step `start`.*default/);
      await refused([{ ...trigger, config: { event_name: 'resend:x' } }], [], /step `start`.*reserved/);
      // A cycle through a delay is a loop over days, not a runaway: allowed.
      const loop = await post('/automations', {
        name: 'loop',
        steps: [trigger, mail('a'), { key: 'd', type: 'delay', config: { duration: '7 days' } }],
        connections: [{ from: 'start', to: 'a' }, { from: 'a', to: 'd' }, { from: 'd', to: 'a' }],
      });
      assert.equal(loop.status, 201);
    });

    it("counts this month's runs in GET /usage", async () => {
      await post('/automations', { name: 'counted', status: 'enabled', steps: [{ ...trigger, config: { event_name: 'count.me' } }, mail('a')], connections: [{ from: 'start', to: 'a' }] });
      assert.equal((await post('/events/send', { event: 'count.me', email: 'kim@example.org' })).status, 202);
      assert.equal((await post('/events/send', { event: 'count.me', email: 'lou@example.org' })).status, 202);
      const usage = (await t.resend.usage.get()).data!;
      assert.equal(usage.automation_runs.used, 2);
    });

    it('custom events: create, read by id and name, update, delete; payloads checked against the schema', async () => {
      const created = await t.resend.events.create({ name: 'order.paid', schema: { amount: 'number', paid_at: 'date', gift: 'boolean' } });
      assert.equal(created.error, null);
      const byName = (await t.resend.events.get('order.paid')).data!;
      assert.equal(byName.id, created.data.id);
      assert.deepEqual(byName.schema, { amount: 'number', paid_at: 'date', gift: 'boolean' });
      assert.equal((await t.resend.events.get(created.data.id)).data!.name, 'order.paid');
      assert.equal((await post('/events', { name: 'order.paid' })).status, 422, 'names are unique');
      assert.match((await post('/events', { name: 'resend:email.sent' })).body.message, /reserved/);
      assert.match((await post('/events', { name: 'x', schema: { a: 'uuid' } })).body.message, /schema\.a/);

      const ok = await post('/events/send', { event: 'order.paid', email: 'ivy@example.org', payload: { amount: '12.5', gift: 'true' } });
      assert.equal(ok.status, 202);
      const bad = await post('/events/send', { event: 'order.paid', email: 'ivy@example.org', payload: { amount: 'twelve' } });
      assert.equal(bad.status, 422);
      assert.match(bad.body.message, /payload\.amount/);
      assert.match((await post('/events/send', { event: 'order.paid', email: 'ivy@example.org', payload: { paid_at: 'yesterday-ish' } })).body.message, /payload\.paid_at/);
      assert.match((await post('/events/send', { event: 'order.paid' })).body.message, /Exactly one of `contact_id` or `email`/);
      assert.equal((await post('/events/send', { event: 'order.paid', contact_id: '0190c0de-0000-7000-8000-000000000000' })).status, 404);

      await t.resend.events.update('order.paid', { schema: null });
      assert.equal((await t.resend.events.get('order.paid')).data!.schema, null);
      assert.ok((await t.resend.events.get('order.paid')).data!.updated_at);
      assert.equal((await t.resend.events.list()).data!.data.length, 1);
      assert.deepEqual((await t.resend.events.remove('order.paid')).data, { object: 'event', id: created.data.id, deleted: true });
      assert.equal((await t.resend.events.get('order.paid')).error?.statusCode, 404);
    });
  });
}
