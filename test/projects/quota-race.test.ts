// A project's quota spent between an automation step's check and its write (another send took the last
// email meanwhile): the write rolls back with the job's end, the job is retried (not left locked), the
// retry waits for the quota to start over, and the email is then written once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { attemptOf, finishAttempt } from '../../src/jobs/attempt.ts';
import { claimJobs } from '../../src/store/jobs.ts';
import { automationStep } from '../../src/workers/automation-step.ts';
import { dialects, type TestApp } from '../support/harness.ts';
import { startTwoProjects, type TwoProjects } from '../support/projects.ts';

const WORKER = 'quota-race';
const email = { from: 'Acme <orders@example.com>', to: 'customer@example.com', subject: 'Hi', text: 'hi' };

/** The automation steps due now, claimed as a worker would (the test drives the attempt by hand). */
async function claimSteps(t: TestApp) {
  const now = t.clock.now();
  const jobs = await claimJobs(t.ctx.db, { workerId: WORKER, now, limit: 10, silentSince: now - 30_000, lockedBefore: now - 300_000 });
  return jobs.filter((job) => job.task === 'automation-step');
}

for (const dialect of dialects) {
  describe(`a project's quota spent under an automation step (${dialect})`, () => {
    let two: TwoProjects;
    before(async () => {
      two = await startTwoProjects(dialect, { worker: false }, { daily_quota: 1 });
    });
    after(() => two.t.close());

    it('retries the step, which waits for the quota to start over, then writes its email once', async () => {
      const { t, b, bId } = two;
      const emailsOfB = async () => (await t.ctx.db.selectFrom('emails').select('id').where('project_id', '=', bId).execute()).length;
      const template = await b.templates.create({ name: 'R', from: 'Shop <shop@example.com>', subject: 'R', html: '<p>x</p>' }).publish();
      const steps = [
        { key: 'start', type: 'trigger', config: { eventName: 'order' } },
        { key: 'send', type: 'send_email', config: { template: { id: template.data!.id } } },
      ];
      assert.equal((await b.automations.create({ name: 'R', status: 'enabled', steps, connections: [{ from: 'start', to: 'send' }] } as never)).error, null);
      assert.equal((await b.events.send({ event: 'order', email: 'x@example.com' })).error, null);

      const [job] = await claimSteps(t);
      assert.ok(job);
      const result = await automationStep.run(t.ctx, attemptOf(t.ctx, automationStep, job, WORKER));
      assert.equal(result.ending.end, 'done');
      assert.equal((await b.emails.send(email)).error, null, 'another send takes the last email meanwhile');
      await finishAttempt(t.ctx, automationStep, job, WORKER, result);
      const retried = await t.ctx.db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
      assert.equal(retried.locked_by, null, 'the job is let go, not left locked');
      assert.match(retried.last_error!, /daily email quota/);
      assert.equal(await emailsOfB(), 1, 'the step wrote nothing');

      t.advance(60_000);
      const [again] = await claimSteps(t);
      assert.equal(again?.id, job.id);
      const waiting = await automationStep.run(t.ctx, attemptOf(t.ctx, automationStep, again, WORKER));
      assert.equal(waiting.ending.end, 'postpone');
      await finishAttempt(t.ctx, automationStep, again, WORKER, waiting);

      const now = new Date(t.clock.now());
      t.advance(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1) - t.clock.now() + 1000);
      const [third] = await claimSteps(t);
      await finishAttempt(t.ctx, automationStep, third!, WORKER, await automationStep.run(t.ctx, attemptOf(t.ctx, automationStep, third!, WORKER)));
      assert.equal(await emailsOfB(), 2, "the step's email, once");
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('id', '=', job.id).executeTakeFirst(), undefined);
    });
  });
}
