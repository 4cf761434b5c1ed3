// A project's limits (docs/projects.md#limits): its own rate limit, its daily and monthly quotas (sends
// refused as Resend refuses them, over the API, SMTP submission and broadcasts; an automation's step waits), and its own relay.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Resend } from 'resend';
import { stepJobKey } from '../../src/domain/automations/run-steps.ts';
import { DEFAULT_PROJECT_ID } from '../../src/store/projects.ts';
import { dialects, eventually, freePort, type TestApp } from '../support/harness.ts';
import { startTwoProjects, type TwoProjects } from '../support/projects.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { idOf, startSubmission, submissionClient } from '../support/submission.ts';

const email = { from: 'Acme <orders@example.com>', to: 'customer@example.com', subject: 'Hi', text: 'hi' };
const RATE_HEADERS = ['ratelimit-limit', 'ratelimit-remaining', 'ratelimit-reset', 'ratelimit-policy', 'retry-after'];

function rateHeaders(headers: Record<string, string> | null): Record<string, string> {
  return Object.fromEntries(RATE_HEADERS.flatMap((name) => (headers?.[name] === undefined ? [] : [[name, headers[name]]])));
}

/** Moves the clock just past the next UTC midnight (and the next month's first, with `month`). */
function nextPeriod(t: TestApp, month = false): void {
  const now = new Date(t.clock.now());
  const start = month ? Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) : Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  t.advance(start - t.clock.now() + 1000);
}

async function projectEmails(t: TestApp, project: string): Promise<number> {
  const row = await t.ctx.db.selectFrom('emails').select((eb) => eb.fn.countAll<number>().as('n')).where('project_id', '=', project).executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const dialect of dialects) {
  describe(`a project's rate limit (${dialect})`, () => {
    let two: TwoProjects;
    before(async () => {
      two = await startTwoProjects(dialect, { worker: false }, { rate_limit: 2 });
    });
    after(() => two.t.close());

    it("limits the project's keys to its rate, with Resend's headers, and not the other project's", async () => {
      const { t, a, b } = two;
      t.advance(1000 - (t.clock.now() % 1000));
      const seen = [];
      for (let i = 0; i < 2; i++) {
        const sent = await b.emails.send(email);
        assert.equal(sent.error, null);
        seen.push(rateHeaders(sent.headers));
      }
      assert.deepEqual(seen, [1, 0].map((remaining) => ({ 'ratelimit-limit': '2', 'ratelimit-remaining': String(remaining), 'ratelimit-reset': '1', 'ratelimit-policy': '2;w=1' })));
      const refused = await b.emails.send(email);
      assert.deepEqual([refused.error?.statusCode, refused.error?.name], [429, 'rate_limit_exceeded']);
      assert.match(refused.error!.message, /\(2 for this API key\)/);
      assert.deepEqual(rateHeaders(refused.headers), { 'ratelimit-limit': '2', 'ratelimit-remaining': '0', 'ratelimit-reset': '1', 'ratelimit-policy': '2;w=1', 'retry-after': '1' });
      // A second key of B has a budget of its own at B's rate; A (no limit anywhere) is not limited.
      assert.equal((await b.apiKeys.create({ name: 'second' })).error?.name, 'rate_limit_exceeded');
      for (let i = 0; i < 6; i++) {
        const sent = await a.emails.send(email);
        assert.equal(sent.error, null);
        assert.deepEqual(rateHeaders(sent.headers), {});
      }
      t.advance(1000);
      assert.equal((await b.emails.send(email)).error, null, 'the next second starts over');
    });

    it('follows a change of the rate, and a key of its own rate wins', async () => {
      const { t, b, admin } = two;
      assert.equal((await admin('PATCH', `/projects/${two.bId}`, { rate_limit: 3 })).status, 200);
      t.advance(1000 - (t.clock.now() % 1000));
      const first = await b.emails.send(email);
      assert.equal(first.headers?.['ratelimit-policy'], '3;w=1');
      const own = await t.fetch('/api-keys', { method: 'POST', headers: { authorization: `Bearer ${two.bToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'own', rate_limit: 7 }) });
      const { token } = (await own.json()) as { token: string };
      const sent = await fetch(`${t.url}/emails`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(email) });
      assert.equal(sent.headers.get('ratelimit-policy'), '7;w=1');
    });
  });

  describe(`a project's daily quota (${dialect})`, () => {
    let two: TwoProjects;
    let submission: Awaited<ReturnType<typeof startSubmission>>;
    before(async () => {
      two = await startTwoProjects(dialect, { worker: false }, { daily_quota: 3 });
      submission = await startSubmission(two.t);
    });
    after(async () => {
      await submission.close();
      await two.t.close();
    });

    it('refuses the 4th email of a UTC day (send, batch and SMTP), the other project sending on, and takes mail again the next day', async () => {
      const { t, a, b, bId } = two;
      const client = submissionClient(submission.port, two.bToken);
      try {
        const first = await b.emails.send(email);
        assert.equal(first.error, null);
        assert.equal(first.headers?.['x-resend-daily-quota'], '1', 'a send answers with what is used of the quota');
        assert.equal(first.headers?.['x-resend-monthly-quota'], undefined, 'and only of the quotas the project has');
        assert.ok(idOf((await client.sendMail({ ...email, to: 'smtp@example.com' })).response), 'the 2nd, over SMTP');
        // A batch that would pass the quota is refused whole.
        const tooMany = await b.batch.send([email, email]);
        assert.deepEqual([tooMany.error?.statusCode, tooMany.error?.name], [429, 'daily_quota_exceeded']);
        assert.equal(await projectEmails(t, bId), 2, 'nothing of the refused batch was stored');
        const third = await b.batch.send([email]);
        assert.equal(third.error, null, 'the 3rd, in a batch');
        assert.equal(third.headers?.['x-resend-daily-quota'], '3');

        const refused = await b.emails.send(email);
        assert.deepEqual([refused.error?.statusCode, refused.error?.name], [429, 'daily_quota_exceeded']);
        assert.match(refused.error!.message, /may send 3 emails a UTC day, it has sent 3/);
        assert.equal(refused.headers?.['x-resend-daily-quota'], '3');
        const midnight = new Date(t.clock.now());
        const untilMidnight = (Date.UTC(midnight.getUTCFullYear(), midnight.getUTCMonth(), midnight.getUTCDate() + 1) - t.clock.now()) / 1000;
        assert.equal(refused.headers?.['retry-after'], String(Math.max(1, Math.ceil(untilMidnight))));
        assert.equal((await b.batch.send([email])).error?.name, 'daily_quota_exceeded');
        await assert.rejects(client.sendMail({ ...email, to: 'smtp@example.com' }), (error: Error & { responseCode?: number }) => {
          assert.equal(error.responseCode, 451);
          assert.match(error.message, /4\.7\.1 You have reached your daily email quota/);
          return true;
        });
        assert.equal(await projectEmails(t, bId), 3);

        // The other project is not counted against it.
        for (let i = 0; i < 5; i++) assert.equal((await a.emails.send(email)).error, null);
        assert.equal((await a.emails.send(email)).headers?.['x-resend-daily-quota'], undefined, 'a project without a quota is not counted');
        assert.equal((await a.batch.send([email, email])).error, null);

        nextPeriod(t);
        assert.equal((await b.emails.send(email)).error, null, 'a new UTC day');
        assert.equal((await b.batch.send([email, email])).error, null);
        assert.equal((await b.emails.send(email)).error?.name, 'daily_quota_exceeded');
        assert.equal(await projectEmails(t, bId), 6);
      } finally {
        client.close();
      }
    });

    it('counts nothing an idempotent retry replays', async () => {
      const { t, b } = two;
      nextPeriod(t);
      const send = () => b.emails.send(email, { idempotencyKey: 'once' });
      const first = await send();
      assert.equal(first.error, null);
      assert.equal(first.headers?.['x-resend-daily-quota'], '1');
      const replay = await send();
      assert.equal(replay.data?.id, first.data.id);
      assert.equal(replay.headers?.['x-resend-daily-quota'], undefined, 'a replay takes nothing of the quota');
      assert.equal((await b.batch.send([email, email])).error, null, 'two more fit: the replay took nothing');
    });
  });

  describe(`a project's monthly quota (${dialect})`, () => {
    let two: TwoProjects;
    let submission: Awaited<ReturnType<typeof startSubmission>>;
    before(async () => {
      two = await startTwoProjects(dialect, { worker: false }, { monthly_quota: 2, daily_quota: 10 });
      submission = await startSubmission(two.t);
    });
    after(async () => {
      await submission.close();
      await two.t.close();
    });

    it('refuses the 3rd email of a UTC month, the next day too, and takes mail again the next month', async () => {
      const { t, a, b } = two;
      const client = submissionClient(submission.port, two.bToken);
      try {
        // Early in a month, so that the next day is in the same month.
        const now = new Date(t.clock.now());
        t.advance(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1, 12) - t.clock.now());
        const both = await b.batch.send([email, email]);
        assert.equal(both.error, null);
        assert.deepEqual([both.headers?.['x-resend-monthly-quota'], both.headers?.['x-resend-daily-quota']], ['2', '2']);
        const refused = await b.emails.send(email);
        assert.deepEqual([refused.error?.statusCode, refused.error?.name], [429, 'monthly_quota_exceeded']);
        assert.deepEqual([refused.headers?.['x-resend-monthly-quota'], refused.headers?.['x-resend-daily-quota']], ['2', '2']);
        await assert.rejects(client.sendMail(email), (error: Error & { responseCode?: number }) => {
          assert.equal(error.responseCode, 550);
          assert.match(error.message, /5\.7\.1 You have reached your monthly email quota/);
          return true;
        });
        assert.equal((await a.emails.send(email)).error, null);
        nextPeriod(t);
        assert.equal((await b.emails.send(email)).error?.name, 'monthly_quota_exceeded', 'a new day, the same month');
        nextPeriod(t, true);
        assert.ok(idOf((await client.sendMail(email)).response), 'a new month');
        assert.equal((await b.emails.send(email)).error, null);
      } finally {
        client.close();
      }
    });
  });

  describe(`a project's quota and its broadcasts (${dialect})`, () => {
    let two: TwoProjects;
    let a: Resend;
    before(async () => {
      // Broadcasts are the default project's until they are scoped (docs/projects.md): its quota applies.
      two = await startTwoProjects(dialect);
      a = two.a;
      assert.equal((await two.admin('PATCH', `/projects/${DEFAULT_PROJECT_ID}`, { daily_quota: 3 })).status, 200);
    });
    after(() => two.t.close());

    it('fans out what the quota allows, the rest the next UTC day, and refuses a send while nothing is left', async () => {
      const { t } = two;
      const segment = (await a.segments.create({ name: 'Everyone' })).data!.id;
      for (let i = 0; i < 5; i++) assert.equal((await a.contacts.create({ email: `reader${i}@example.com`, segments: [{ id: segment }] })).error, null);
      const created = await a.broadcasts.create({ from: 'News <news@example.com>', subject: 'Hello', text: 'hi', segmentId: segment, send: true });
      assert.equal(created.error, null);
      const broadcastEmails = async () => Number((await t.ctx.db.selectFrom('emails').select((eb) => eb.fn.countAll<number>().as('n')).where('broadcast_id', '=', created.data.id).executeTakeFirstOrThrow()).n);
      await eventually(async () => (await broadcastEmails()) === 3);
      assert.equal((await a.broadcasts.get(created.data.id)).data?.status, 'sending');
      const again = await a.broadcasts.create({ from: 'News <news@example.com>', subject: 'Again', text: 'hi', segmentId: segment, send: true });
      assert.deepEqual([again.error?.statusCode, again.error?.name], [429, 'daily_quota_exceeded']);
      assert.equal((await a.emails.send(email)).error?.name, 'daily_quota_exceeded');
      assert.equal((await two.b.emails.send(email)).error, null, 'the other project sends on');

      nextPeriod(t);
      await eventually(async () => (await a.broadcasts.get(created.data.id)).data?.status === 'sent' || undefined);
      assert.equal(await broadcastEmails(), 5);
      const recipients = await t.ctx.db.selectFrom('emails').select('to').where('broadcast_id', '=', created.data.id).execute();
      assert.equal(new Set(recipients.map((r) => JSON.stringify(r.to))).size, 5, 'each contact once');
      // The new day's 3: the broadcast's last 2, and this one.
      assert.equal((await a.emails.send(email)).error, null);
      assert.equal((await a.emails.send(email)).error?.name, 'daily_quota_exceeded');
    });
  });

  describe(`a project's quota and its automations (${dialect})`, () => {
    let two: TwoProjects;
    before(async () => {
      two = await startTwoProjects(dialect, {}, { daily_quota: 1 });
    });
    after(() => two.t.close());

    it("holds a send_email step while its run's project has no email left, and sends it the next UTC day", async () => {
      const { t, a, b, bId } = two;
      const template = await b.templates.create({ name: 'Receipt', from: 'Shop <shop@example.com>', subject: 'Receipt', html: '<p>thanks</p>' }).publish();
      assert.equal(template.error, null, JSON.stringify(template.error));
      const automation = await b.automations.create({
        name: 'Receipts',
        status: 'enabled',
        steps: [
          { key: 'start', type: 'trigger', config: { eventName: 'order' } },
          { key: 'send', type: 'send_email', config: { template: { id: template.data.id } } },
        ],
        connections: [{ from: 'start', to: 'send' }],
      });
      assert.equal(automation.error, null, JSON.stringify(automation.error));
      const automationId = automation.data.id;
      /** The send step of the run of `email`'s event, once the run is there. */
      const sendStep = (email: string) =>
        eventually(async () => {
          const run = (await b.automations.runs.list({ automationId })).data!.data.find((r) => (r as { email?: string }).email === email);
          const steps = run && (await b.get<{ data: { step_id: string; key: string; status: string; output: unknown }[] }>(`/automations/${automationId}/runs/${run.id}/steps`)).data!.data;
          return steps?.find((s) => s.key === 'send');
        });

      assert.equal((await b.events.send({ event: 'order', email: 'first@example.com' })).error, null);
      const first = await eventually(async () => {
        const step = await sendStep('first@example.com');
        return step.status === 'completed' ? step : undefined;
      });
      assert.equal(await projectEmails(t, bId), 1);

      assert.equal((await b.events.send({ event: 'order', email: 'second@example.com' })).error, null);
      const second = await sendStep('second@example.com');
      // It waits: its job is due again once the quota starts over, not before.
      const job = () => t.ctx.db.selectFrom('jobs').selectAll().where('key', '=', stepJobKey(second.step_id)).executeTakeFirst();
      await eventually(async () => {
        const row = await job();
        return row && row.locked_by === null && Number(row.run_at) > t.clock.now() ? row : undefined;
      });
      assert.equal((await sendStep('second@example.com')).status, 'pending');
      assert.equal(await projectEmails(t, bId), 1, 'the quota spent, no email');
      assert.equal((await b.emails.send(email)).error?.name, 'daily_quota_exceeded', 'the step took the day’s email');
      for (let i = 0; i < 3; i++) assert.equal((await a.emails.send(email)).error, null, 'the other project sends on');

      nextPeriod(t);
      const sent = await eventually(async () => {
        const step = await sendStep('second@example.com');
        return step.status === 'completed' ? step : undefined;
      });
      assert.notEqual((sent.output as { email_id: string }).email_id, (first.output as { email_id: string }).email_id);
      assert.equal(await projectEmails(t, bId), 2, 'each event’s email once');
      assert.equal(await job(), undefined);
      assert.equal((await b.emails.send(email)).error?.name, 'daily_quota_exceeded', 'the new day’s email is the step’s');
    });
  });

  describe(`a project's own relay (${dialect})`, () => {
    let two: TwoProjects;
    let install: TestSmtpServer;
    let own: TestSmtpServer;
    before(async () => {
      install = await startSmtpServer();
      own = await startSmtpServer();
      two = await startTwoProjects(dialect, { env: { SMTP_URL: install.url } }, { smtp_url: own.url });
    });
    after(async () => {
      await two.t.close();
      await install.close();
      await own.close();
    });

    const delivered = (sink: TestSmtpServer, id: string) => sink.messages.find((m) => m.parsed.messageId?.startsWith(`<${id}@`));

    it("sends the project's mail through its relay, and the default project's through the install's", async () => {
      const fromB = (await two.b.emails.send({ ...email, subject: 'through B’s relay' })).data!.id;
      const fromA = (await two.a.emails.send({ ...email, subject: 'through the install’s relay' })).data!.id;
      await eventually(() => delivered(own, fromB) && delivered(install, fromA));
      assert.equal(delivered(install, fromB), undefined);
      assert.equal(delivered(own, fromA), undefined);
      // The sink has the message a moment before the worker records its answer.
      await eventually(async () => (await two.b.emails.get(fromB)).data?.last_event === 'delivered' || undefined);
    });

    it('defers the mail of a relay that cannot be reached, without stopping anyone, and sends it once the relay is fixed', async () => {
      const { t, admin, bId } = two;
      const closed = await freePort();
      assert.equal((await admin('PATCH', `/projects/${bId}`, { smtp_url: `smtp://127.0.0.1:${closed}` })).status, 200);
      const waiting = (await two.b.emails.send({ ...email, subject: 'waits' })).data!.id;
      await eventually(async () => (await two.b.emails.get(waiting)).data?.last_event === 'delivery_delayed' || undefined);
      const fromA = (await two.a.emails.send({ ...email, subject: 'A goes on' })).data!.id;
      await eventually(() => delivered(install, fromA));
      assert.equal((await admin('PATCH', `/projects/${bId}`, { smtp_url: own.url })).status, 200);
      // Past the retry's backoff (and the project cache's second).
      for (let i = 0; i < 20 && !delivered(own, waiting); i++) {
        t.advance(60_000);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await eventually(() => delivered(own, waiting));
      assert.equal(delivered(install, waiting), undefined);
    });
  });
}
