import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { readConfig } from '../../src/config.ts';
import { closeContext, createContext, type Context } from '../../src/context.ts';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { done, type TaskDeclaration } from '../../src/jobs/task.ts';
import { saveHeartbeat } from '../../src/store/workers.ts';
import { Runner, WORKER_STALE_MS } from '../../src/jobs/runner.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { configEnv, dialects, eventually, startApp, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const email = (i: number) => ({ from: 'a@example.com', to: `user${i}@example.com`, subject: `#${i}`, text: 'hello' });

/** A task that holds its job until `release()`: a long send whose end the test decides. A marker job ends at once. */
function holdingTask() {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started: string[] = [];
  let settled = 0;
  const hold: TaskDeclaration<'send-email'> = {
    attempts: () => 21,
    async run(_ctx, attempt) {
      if (attempt.payload.email_id === 'marker') return done();
      started.push(attempt.payload.email_id);
      try {
        await gate;
        return done();
      } finally {
        settled++;
      }
    },
  };
  // Jobs named send-email, run by a task that holds them.
  return { tasks: { ...tasks, 'send-email': hold }, started, settled: () => settled, release };
}

async function addHoldJobs(t: TestApp, n: number): Promise<void> {
  await t.ctx.writer.transaction(async (tx) => {
    for (let i = 0; i < n; i++) await enqueue(t.ctx, tx, 'send-email', { email_id: `${i}` }, { key: `hold:${i}` });
  });
}

const jobs = (t: TestApp) => t.ctx.db.selectFrom('jobs').select(['key', 'locked_by', 'attempts']).orderBy('key').execute();

async function heartbeatOf(t: TestApp, workerId: string): Promise<number | undefined> {
  const row = await t.ctx.db.selectFrom('workers').select('heartbeat_at').where('id', '=', workerId).executeTakeFirst();
  return row?.heartbeat_at;
}

/** Puts a job in the hands of `workerId`, as its claim would have. */
async function lockJob(t: TestApp, emailId: string, workerId: string): Promise<void> {
  await t.ctx.db
    .updateTable('jobs')
    .set({ locked_by: workerId, locked_at: t.clock.now(), attempts: 1 })
    .where('key', '=', `send-email:${emailId}`)
    .execute();
}

/** The context of another worker process on the test app's database and clock; its log lines go to `lines`. */
async function workerContext(t: TestApp, lines: string[]): Promise<Context> {
  const log = pino({ level: 'info' }, { write: (line: string) => void lines.push(line) });
  return createContext(readConfig(configEnv(t.ctx)), { clock: t.clock, log });
}

for (const dialect of dialects) {
  describe(`worker heartbeats (${dialect})`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(() => smtp.close());

    it('takes over the job of a worker whose heartbeat went stale, not before, and at once when it has no row', async () => {
      smtp.messages.length = 0;
      const t = await startApp(dialect, { env: { SMTP_URL: smtp.url } });
      try {
        await t.runner!.stop(0);
        const silent = (await t.resend.emails.send(email(1))).data!.id;
        const vanished = (await t.resend.emails.send(email(2))).data!.id;
        await saveHeartbeat(t.ctx.db, 'silent-worker', t.clock.now(), null);
        await lockJob(t, silent, 'silent-worker');
        await lockJob(t, vanished, 'vanished-worker');
        t.runner!.start();
        await eventually(async () => (await t.resend.emails.get(vanished)).data?.last_event === 'delivered');

        t.advance(WORKER_STALE_MS - 1000);
        // An email sent now, delivered: a claim has looked at the jobs since the clock moved, and claims
        // take the oldest first.
        const marker = (await t.resend.emails.send(email(3))).data!.id;
        await eventually(async () => (await t.resend.emails.get(marker)).data?.last_event === 'delivered');
        assert.deepEqual(smtp.messages.map((m) => m.to[0]), ['user2@example.com', 'user3@example.com'], 'a heartbeat younger than the staleness is respected');
        assert.equal((await jobs(t))[0]!.locked_by, 'silent-worker');

        t.advance(2000);
        await eventually(async () => (await t.resend.emails.get(silent)).data?.last_event === 'delivered');
        assert.equal(smtp.messages.length, 3);
      } finally {
        await t.close();
      }
    });

    it('leaves the job of a live worker alone past the staleness, and takes it only past the lock timeout', async () => {
      // One job at a time: the holder has no room for more, so that only b claims what is added.
      const t = await startApp(dialect, { worker: false, env: { WORKER_LOCK_TIMEOUT_MS: '120000', WORKER_CONCURRENCY: '1' } });
      const held = holdingTask();
      const a = new Runner(t.ctx, held.tasks);
      const b = new Runner(t.ctx, held.tasks);
      try {
        await addHoldJobs(t, 1);
        a.start();
        await eventually(() => held.started.length === 1);
        b.start();
        const step = async () => {
          t.clock.advance(20_000);
          a.wake();
          b.wake();
          await eventually(async () => (await heartbeatOf(t, a.id)) === t.clock.now());
        };
        // Two minutes after the claim, four times the staleness, in steps shorter than it: the holder beats at each.
        for (let i = 0; i < 6; i++) await step();
        // A job added now, run by b: b's claim has looked at the jobs since the clock moved, oldest first.
        await t.ctx.writer.transaction((tx) => enqueue(t.ctx, tx, 'send-email', { email_id: 'marker' }, { key: 'marker:1' }));
        b.wake();
        await eventually(async () => (await jobs(t)).length === 1 || held.started.length > 1);
        assert.equal(held.started.length, 1, 'the job ran once');
        assert.equal((await jobs(t))[0]!.locked_by, a.id);

        await step();
        await eventually(() => held.started.length === 2);
      } finally {
        held.release();
        await a.stop(5000);
        await b.stop(5000);
        await t.close();
      }
    });

    it('stop() hands back the jobs its timeout cut off at once, deletes its heartbeat, and logs one line', async () => {
      const t = await startApp(dialect, { worker: false });
      const held = holdingTask();
      const lines: string[] = [];
      const ctx = await workerContext(t, lines);
      let closed = false;
      const a = new Runner(ctx, held.tasks);
      const b = new Runner(t.ctx, held.tasks);
      try {
        await addHoldJobs(t, 2);
        a.start();
        await eventually(() => held.started.length === 2);
        assert.notEqual(await heartbeatOf(t, a.id), undefined);

        await a.stop(100);
        assert.equal(await heartbeatOf(t, a.id), undefined, 'its heartbeat row is gone');
        assert.deepEqual(
          (await jobs(t)).map((job) => [job.locked_by, job.attempts]),
          [[null, 0], [null, 0]],
          'unlocked, their attempt not counted',
        );
        b.start(); // the clock does not move
        await eventually(() => held.started.length === 4);

        // As main.ts does after stop(): the context closes under the tasks still running in it.
        await closeContext(ctx);
        closed = true;
        held.release();
        await eventually(() => held.settled() === 4);
        await eventually(async () => (await jobs(t)).length === 0);
        const loud = lines.map((line) => JSON.parse(line) as { level: number; jobs?: number }).filter((line) => line.level >= 40);
        assert.deepEqual(loud.map((line) => [line.level, line.jobs]), [[40, 2]], 'one warning with the count, and no errors');
      } finally {
        held.release();
        if (!closed) {
          await a.stop(0);
          await closeContext(ctx);
        }
        await b.stop(5000);
        await t.close();
      }
    });

    it('stop() hands back at once, unstarted, the jobs of a claim still in the database', async () => {
      const t = await startApp(dialect, { worker: false });
      const held = holdingTask();
      const a = new Runner(t.ctx, held.tasks);
      const b = new Runner(t.ctx, held.tasks);
      try {
        await addHoldJobs(t, 3);
        a.start(); // its first claim is under way when stop() comes
        await a.stop(5000);
        assert.deepEqual(held.started, [], 'none was started');
        assert.deepEqual((await jobs(t)).map((job) => [job.locked_by, job.attempts]), [[null, 0], [null, 0], [null, 0]]);
        assert.equal(await heartbeatOf(t, a.id), undefined);
        b.start();
        await eventually(() => held.started.length === 3);
      } finally {
        held.release();
        await b.stop(5000);
        await t.close();
      }
    });
  });
}
