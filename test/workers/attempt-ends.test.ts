import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { enqueue } from '../../src/jobs/enqueue.ts';
import { Runner } from '../../src/jobs/runner.ts';
import { done, type TaskDeclaration } from '../../src/jobs/task.ts';
import type { Tx } from '../../src/store/db.ts';
import { saveHeartbeat } from '../../src/store/workers.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { createTestDatabase, dialects, eventually, startApp, type Dialect, type TestApp, type TestDatabase } from '../support/harness.ts';
import { startPgCounter } from '../support/pg-counter.ts';

/**
 * send-email jobs run by a task that holds each until `release()`, so that they all end in the same
 * turn; each ends done with a write that notes the transaction it ran in, and job `fails` writes an error.
 */
function gatedTask(fails?: string) {
  let release!: () => void;
  const gate = new Promise<void>((resolve) => (release = resolve));
  const started: string[] = [];
  const written = new Map<string, Tx>();
  const task: TaskDeclaration<'send-email'> = {
    attempts: () => 5,
    async run(_ctx, attempt) {
      const id = attempt.payload.email_id;
      started.push(id);
      await gate;
      return done(async (tx) => {
        if (id === fails) throw new Error(`the writes of ${id} fail`);
        written.set(id, tx);
      });
    },
  };
  return { tasks: { ...tasks, 'send-email': task }, started, written, release };
}

async function addJobs(t: TestApp, n: number): Promise<void> {
  await t.ctx.writer.transaction(async (tx) => {
    for (let i = 0; i < n; i++) await enqueue(t.ctx, tx, 'send-email', { email_id: `${i}` }, { key: `end:${i}` });
  });
}

const jobs = (t: TestApp) => t.ctx.db.selectFrom('jobs').select(['key', 'locked_by', 'attempts', 'last_error']).where('task', '=', 'send-email').execute();

/**
 * Starts a runner of gatedTask(`fails`) on an app of its own (`database` when given), with `n` jobs
 * started and held; runs `body`, then lets the tasks go and closes everything.
 */
async function withHeldJobs(
  dialect: Dialect,
  options: { n: number; fails?: string; database?: TestDatabase },
  body: (t: TestApp, gated: ReturnType<typeof gatedTask>) => Promise<void>,
): Promise<void> {
  const t = await startApp(dialect, { worker: false, database: options.database });
  const gated = gatedTask(options.fails);
  const runner = new Runner(t.ctx, gated.tasks);
  try {
    await addJobs(t, options.n);
    runner.start();
    await eventually(() => gated.started.length === options.n);
    await body(t, gated);
  } finally {
    gated.release();
    await runner.stop(5000);
    await t.close();
  }
}

for (const dialect of dialects) {
  describe(`the runner ends attempts that finish together (${dialect})`, () => {
    it('in one transaction, each job ended once and each write made once', () =>
      withHeldJobs(dialect, { n: 10 }, async (t, gated) => {
        gated.release();
        await eventually(async () => (await jobs(t)).length === 0);
        assert.equal(gated.written.size, 10);
        assert.equal(new Set(gated.written.values()).size, 1, 'one transaction for the ten');
      }));

    it('leaves alone a job taken over meanwhile, and ends the others', () =>
      withHeldJobs(dialect, { n: 6 }, async (t, gated) => {
        // A live worker took it over (its heartbeat is fresh: the test's clock does not move).
        await saveHeartbeat(t.ctx.db, 'another-worker', t.clock.now(), null);
        await t.ctx.db.updateTable('jobs').set({ locked_by: 'another-worker' }).where('key', '=', 'end:3').execute();
        gated.release();
        await eventually(async () => (await jobs(t)).length === 1);
        assert.deepEqual((await jobs(t)).map((job) => [job.key, job.locked_by]), [['end:3', 'another-worker']]);
        assert.deepEqual([...gated.written.keys()].sort(), ['0', '1', '2', '4', '5'], 'no write for the job no longer held');
      }));

    it('when one attempt’s writes fail, the others end done and it alone is retried', () =>
      withHeldJobs(dialect, { n: 6, fails: '2' }, async (t, gated) => {
        gated.release();
        await eventually(async () => (await jobs(t)).length === 1 && (await jobs(t))[0]!.locked_by === null);
        const [left] = await jobs(t);
        assert.equal(left!.key, 'end:2');
        assert.equal(left!.attempts, 1);
        assert.match(left!.last_error ?? '', /the writes of 2 fail/);
        assert.deepEqual([...gated.written.keys()].sort(), ['0', '1', '3', '4', '5']);
      }));
  });
}

describe('the runner ends attempts that finish together, on the wire (postgres)', { skip: !dialects.includes('postgres') }, () => {
  it('deletes the ten jobs in one statement', async () => {
    const database = await createTestDatabase('postgres');
    const counter = await startPgCounter(database.url);
    const deletes = () => [...counter.counts().byText].filter(([text]) => text.startsWith('delete from "jobs"')).reduce((sum, [, count]) => sum + count, 0);
    try {
      await withHeldJobs('postgres', { n: 10, database: { url: counter.url, drop: database.drop } }, async (t, gated) => {
        const before = deletes();
        gated.release();
        await eventually(async () => (await jobs(t)).length === 0);
        assert.equal(gated.written.size, 10);
        assert.equal(deletes() - before, 1);
      });
    } finally {
      await counter.close();
      await database.drop();
    }
  });
});
