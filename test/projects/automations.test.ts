// Projects (docs/projects.md) and automations: an automation, its runs and its steps, and custom events,
// are one project's. Another project's key lists none of them, and an id of them answers it as a missing
// id; an event starts only its own project's automations; a step reads and writes its run's project.
// A is the install's default project, which unscoped code reads: so B's automations are the ones that
// show a step reading the wrong project.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AutomationStep, Resend } from 'resend';
import { cookiesOf, csrfField, postForm, signIn } from '../support/dashboard-forms.ts';
import { dialects, eventually, type TestApp } from '../support/harness.ts';
import { MISSING_ID, startTwoProjects } from '../support/projects.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

interface Failure {
  error: { statusCode: number | null; name: string; message: string } | null;
}

/** A foreign id answers exactly as a missing one, and that is a 404. */
function sameAsMissing(foreign: Failure, missing: Failure, what: string) {
  const shape = (r: Failure) => [r.error?.statusCode, r.error?.name, r.error?.message];
  assert.deepEqual(shape(foreign), shape(missing), what);
  assert.equal(foreign.error?.statusCode, 404, what);
}

/** A trigger on `event`, then one send of `template` (with `topic`, if given). */
function sendOnEvent(event: string, template: string, topic?: string): { steps: AutomationStep[]; connections: { from: string; to: string }[] } {
  return {
    steps: [
      { key: 'start', type: 'trigger', config: { eventName: event } },
      { key: 'send', type: 'send_email', config: { template: { id: template }, ...(topic ? { topicId: topic } : {}) } },
    ],
    connections: [{ from: 'start', to: 'send' }],
  };
}

for (const dialect of dialects) {
  describe(`projects: automations and custom events (${dialect})`, () => {
    let smtp: TestSmtpServer;
    let t: TestApp;
    let a: Resend;
    let b: Resend;
    let bToken: string;
    let aTemplate: string;
    let bTemplate: string;
    /** A's automation, started by `signup`. */
    let aAutomation: string;

    const runsOf = async (client: Resend, automationId: string) =>
      (await client.automations.runs.list({ automationId })).data!.data as { id: string; email?: string }[];
    /** The send step of a run, once it has ended. */
    const sendStep = (client: Resend, automationId: string, runId: string) =>
      eventually(async () => {
        const run = (await client.automations.runs.get({ automationId, runId })).data!;
        const step = run.steps.find((s) => s.key === 'send');
        return step && step.status !== 'pending' ? step : undefined;
      });
    async function create(client: Resend, name: string, graph: ReturnType<typeof sendOnEvent>) {
      const { data, error } = await client.automations.create({ name, status: 'enabled', ...graph });
      assert.equal(error, null, JSON.stringify(error));
      return data.id;
    }

    before(async () => {
      smtp = await startSmtpServer();
      ({ t, a, b, bToken } = await startTwoProjects(dialect, { env: { SMTP_URL: smtp.url } }));
      const template = async (client: Resend, name: string, from: string) => {
        const { data, error } = await client.templates.create({ name, from, subject: `${name} subject`, html: `<p>${name}</p>` }).publish();
        assert.equal(error, null, JSON.stringify(error));
        return data.id;
      };
      aTemplate = await template(a, 'A welcome', 'A <hello@a-automations.example>');
      bTemplate = await template(b, 'B welcome', 'B <hello@b-automations.example>');
      aAutomation = await create(a, 'A signup', sendOnEvent('signup', aTemplate));
    });
    after(async () => {
      await t.close();
      await smtp.close();
    });

    it('keeps automations and their runs apart: not listed, read, changed, stopped or deleted through the other project', async () => {
      assert.equal((await a.events.send({ event: 'signup', email: 'ann@a.example' })).error, null);
      const [run] = await runsOf(a, aAutomation);
      assert.ok(run);
      await sendStep(a, aAutomation, run.id);

      assert.ok(!(await b.automations.list()).data!.data.some((x) => x.id === aAutomation), "A's automation is listed to B");
      sameAsMissing(await b.automations.get(aAutomation), await b.automations.get(MISSING_ID), 'get');
      sameAsMissing(await b.automations.update(aAutomation, { name: 'taken' }), await b.automations.update(MISSING_ID, { name: 'taken' }), 'update');
      sameAsMissing(await b.automations.stop(aAutomation), await b.automations.stop(MISSING_ID), 'stop');
      sameAsMissing(await b.automations.duplicate(aAutomation), await b.automations.duplicate(MISSING_ID), 'duplicate');
      sameAsMissing(await b.automations.remove(aAutomation), await b.automations.remove(MISSING_ID), 'remove');
      sameAsMissing(await b.automations.runs.list({ automationId: aAutomation }), await b.automations.runs.list({ automationId: MISSING_ID }), 'runs');
      sameAsMissing(
        await b.automations.runs.get({ automationId: aAutomation, runId: run.id }),
        await b.automations.runs.get({ automationId: MISSING_ID, runId: run.id }),
        'a run',
      );
      const steps = `/automations/${aAutomation}/runs/${run.id}/steps`;
      const stepId = (await a.get<{ data: { step_id: string }[] }>(steps)).data!.data[0]!.step_id;
      sameAsMissing(await b.get(steps), await b.get(`/automations/${MISSING_ID}/runs/${run.id}/steps`), "a run's steps");
      sameAsMissing(await b.get(`${steps}/${stepId}`), await b.get(`/automations/${MISSING_ID}/runs/${run.id}/steps/${stepId}`), 'a step');
      assert.equal((await b.automations.list()).data!.data.length, 0, 'B duplicated nothing');

      const still = (await a.automations.get(aAutomation)).data!;
      assert.deepEqual([still.name, still.status], ['A signup', 'enabled'], "A's automation is unchanged");
      assert.equal((await runsOf(a, aAutomation)).length, 1);
    });

    it("starts only the automations of the event's project: B's event named as A's trigger never starts A's", async () => {
      const before = (await runsOf(a, aAutomation)).length;
      const bAutomation = await create(b, 'B signup', sendOnEvent('signup', bTemplate));
      assert.equal((await b.events.send({ event: 'signup', email: 'bob@b.example' })).error, null);
      assert.deepEqual((await runsOf(b, bAutomation)).map((r) => r.email), ['bob@b.example']);
      assert.equal((await runsOf(a, aAutomation)).length, before, "B's event started A's automation");
      assert.equal((await a.events.send({ event: 'signup', email: 'cat@a.example' })).error, null);
      assert.equal((await runsOf(a, aAutomation)).length, before + 1);
      assert.deepEqual((await runsOf(b, bAutomation)).map((r) => r.email), ['bob@b.example'], "A's event started B's automation");

      // With no automation of its own on the event, B's event starts nothing and makes no contact.
      assert.equal((await b.automations.remove(bAutomation)).error, null);
      assert.equal((await b.events.send({ event: 'signup', email: 'dan@b.example' })).error, null);
      assert.equal((await runsOf(a, aAutomation)).length, before + 1);
      for (const client of [a, b]) assert.ok(!(await client.contacts.list()).data!.data.some((c) => c.email === 'dan@b.example'));

      // A's contact is no contact of B's.
      const ann = (await a.contacts.get({ email: 'ann@a.example' })).data!;
      sameAsMissing(await b.events.send({ event: 'signup', contactId: ann.id }), await b.events.send({ event: 'signup', contactId: MISSING_ID }), 'a contact id');
    });

    it("writes a step's email in its run's project, and reads that project's template and topic", async () => {
      const bAutomation = await create(b, 'B order', sendOnEvent('order', bTemplate));
      await b.events.send({ event: 'order', email: 'eve@b.example' });
      const [bRun] = await runsOf(b, bAutomation);
      const bStep = await sendStep(b, bAutomation, bRun!.id);
      assert.equal(bStep.status, 'completed', JSON.stringify(bStep));
      const bEmail = (bStep.output as { email_id: string }).email_id;
      assert.equal((await b.emails.get(bEmail)).data?.from, 'B <hello@b-automations.example>');
      sameAsMissing(await a.emails.get(bEmail), await a.emails.get(MISSING_ID), "B's step's email read through A");
      assert.ok(!(await a.emails.list()).data!.data.some((e) => e.id === bEmail));

      const [aRun] = await runsOf(a, aAutomation);
      const aEmail = ((await sendStep(a, aAutomation, aRun!.id)).output as { email_id: string }).email_id;
      assert.ok((await a.emails.list()).data!.data.some((e) => e.id === aEmail));
      sameAsMissing(await b.emails.get(aEmail), await b.emails.get(MISSING_ID), "A's step's email read through B");

      // A's topic is no topic of B's: B's step on it sends nothing.
      const aTopic = (await a.topics.create({ name: 'A news', defaultSubscription: 'opt_in' })).data!.id;
      const onTopic = await create(b, 'B news', sendOnEvent('news', bTemplate, aTopic));
      await b.events.send({ event: 'news', email: 'fay@b.example' });
      const [topicRun] = await runsOf(b, onTopic);
      const skipped = await sendStep(b, onTopic, topicRun!.id);
      assert.deepEqual([skipped.status, (skipped.output as { reason: string }).reason], ['skipped', `Not sent: there is no topic ${aTopic}.`]);
    });

    it("refuses an automation naming another project's template or segment, as a missing one", async () => {
      const refusal = async (client: Resend, step: AutomationStep, id: string) => {
        const graph = { steps: [{ key: 'start', type: 'trigger', config: { eventName: 'x' } } as AutomationStep, step], connections: [{ from: 'start', to: step.key }] };
        const { error } = await client.automations.create({ name: 'refused', ...graph });
        assert.deepEqual([error?.statusCode, error?.name], [422, 'validation_error'], JSON.stringify(error));
        return error!.message.replace(id, '<id>');
      };
      const send = (id: string): AutomationStep => ({ key: 'send', type: 'send_email', config: { template: { id } } });
      assert.equal(await refusal(a, send(bTemplate), bTemplate), await refusal(a, send(MISSING_ID), MISSING_ID));
      assert.equal(await refusal(b, send(aTemplate), aTemplate), await refusal(b, send(MISSING_ID), MISSING_ID));
      const aSegment = (await a.segments.create({ name: 'A segment' })).data!.id;
      const add = (id: string): AutomationStep => ({ key: 'add', type: 'add_to_segment', config: { segmentId: id } });
      assert.equal(await refusal(b, add(aSegment), aSegment), await refusal(b, add(MISSING_ID), MISSING_ID));

      const bAutomation = (await b.automations.list()).data!.data[0]!.id;
      const changed = await b.automations.update(bAutomation, sendOnEvent('order', aTemplate));
      assert.deepEqual([changed.error?.statusCode, changed.error?.name], [422, 'validation_error']);
      const kept = (await b.automations.get(bAutomation)).data!.steps.find((s) => s.key === 'send');
      assert.equal((kept?.config as { template: { id: string } }).template.id, bTemplate, "B's automation is unchanged");
    });

    it('keeps custom events apart: not listed, read, changed or deleted through the other project, nor their schema applied to it', async () => {
      const created = await a.events.create({ name: 'order.placed', schema: { amount: 'number' } });
      assert.equal(created.error, null, JSON.stringify(created.error));
      const id = created.data.id;
      assert.deepEqual((await b.events.list()).data!.data, []);
      for (const identifier of [id, 'order.placed']) {
        const missing = identifier === id ? MISSING_ID : 'no.such.event';
        sameAsMissing(await b.events.get(identifier), await b.events.get(missing), `get ${identifier}`);
        sameAsMissing(await b.events.update(identifier, { schema: null }), await b.events.update(missing, { schema: null }), `update ${identifier}`);
        sameAsMissing(await b.events.remove(identifier), await b.events.remove(missing), `remove ${identifier}`);
      }
      assert.deepEqual((await a.events.get(id)).data!.schema, { amount: 'number' }, "A's event is unchanged");
      // A's schema checks A's events only.
      assert.equal((await a.events.send({ event: 'order.placed', email: 'gus@a.example', payload: { amount: 'lots' } })).error?.statusCode, 422);
      assert.equal((await b.events.send({ event: 'order.placed', email: 'gus@b.example', payload: { amount: 'lots' } })).error, null);
      // A name is unique within its project: B may have its own, and A's is A's only once.
      const own = await b.events.create({ name: 'order.placed' });
      assert.equal(own.error, null, JSON.stringify(own.error));
      assert.notEqual(own.data.id, id);
      assert.deepEqual((await a.events.get(id)).data!.schema, { amount: 'number' }, "A's event is unchanged");
      assert.match((await a.events.create({ name: 'order.placed' })).error!.message, /already exists/);
    });

    it("shows a dashboard session its project's automations only", async () => {
      const cookie = cookiesOf(await signIn(t, bToken));
      const page = async (path: string) => {
        const response = await fetch(`${t.url}/dashboard${path}`, { headers: { cookie } });
        return { status: response.status, text: await response.text() };
      };
      const list = await page('/automations');
      assert.match(list.text, /B order/);
      assert.doesNotMatch(list.text, /A signup/);
      const [run] = await runsOf(a, aAutomation);
      assert.equal((await page(`/automations/${aAutomation}`)).status, 404);
      assert.equal((await page(`/automations/${aAutomation}/runs/${run!.id}`)).status, 404);
      const stop = await postForm(t, `/dashboard/automations/${aAutomation}/stop`, { _csrf: csrfField(list.text) }, cookie);
      assert.equal(stop.status, 404);
      assert.equal((await a.automations.get(aAutomation)).data!.status, 'enabled');
    });
  });
}
