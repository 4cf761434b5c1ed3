import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { CHUNK_RECIPIENTS } from '../../../src/domain/broadcasts/fan-out.ts';
import { configEnv, runByHand, dialects, eventually, outliveKilledWorkers, startApp, startWorker, type TestApp } from '../../support/harness.ts';

const content = { from: 'news@example.com', subject: 'Hi {{{FIRST_NAME|there}}}', html: '<p>Hi</p>' };

/** A segment of `n` contacts, imported through the API by a worker that stops afterwards. */
async function segmentOf(t: TestApp, n: number): Promise<string> {
  const segment = (await t.resend.segments.create({ name: `Segment of ${n}` })).data!.id;
  const lines = ['email,first_name'];
  for (let i = 0; i < n; i++) lines.push(`fan${i}.${segment.slice(-6)}@example.com,Fan${i}`);
  const worker = await startWorker(t);
  try {
    const { data } = await t.resend.contacts.imports.create({ file: new Blob([lines.join('\n')]), segments: [{ id: segment }] });
    await eventually(async () => (await t.resend.contacts.imports.get(data!.id)).data?.status === 'completed' || undefined, 60_000);
  } finally {
    await worker.stop();
  }
  return segment;
}

async function emailsOf(t: TestApp, broadcastId: string): Promise<{ count: number; distinct: number }> {
  const row = await t.ctx.db
    .selectFrom('emails')
    .select([sql<number>`count(*)`.as('count'), sql<number>`count(distinct ${sql.ref('to')})`.as('distinct')])
    .where('broadcast_id', '=', broadcastId)
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), distinct: Number(row.distinct) };
}

async function sendJobCount(t: TestApp): Promise<number> {
  const row = await t.ctx.db.selectFrom('jobs').select(sql<number>`count(*)`.as('n')).where('task', '=', 'send-email').executeTakeFirstOrThrow();
  return Number(row.n);
}

for (const dialect of dialects) {
  describe(`broadcast fan-out (${dialect})`, () => {
    it('resumes after the worker is killed mid-fan-out: no contact skipped or doubled, and later members left out', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        const n = 30_000;
        const segment = await segmentOf(t, n);
        const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true });
        const id = data!.id;
        const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', 'worker'], {
          env: { ...process.env, ...configEnv(t.ctx) },
          stdio: 'ignore',
        });
        await eventually(async () => (await emailsOf(t, id)).count > 0, 60_000);
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));

        const atCrash = (await t.resend.broadcasts.get(id)).data!;
        assert.equal(atCrash.status, 'sending', 'the worker died mid-fan-out');
        const written = await emailsOf(t, id);
        assert.ok(written.count < n, `${written.count} of ${n} written before the crash`);
        const cursor = (await t.ctx.db.selectFrom('broadcasts').select('fanout_cursor').where('id', '=', id).executeTakeFirstOrThrow()).fanout_cursor!;
        const upTo = await t.ctx.db
          .selectFrom('broadcast_recipients')
          .select(sql<number>`count(*)`.as('n'))
          .where('broadcast_id', '=', id)
          .where('contact_id', '<=', cursor)
          .executeTakeFirstOrThrow();
        assert.equal(Number(upTo.n), written.count, 'the emails and the cursor were committed together');

        // After the send started: one contact joins the segment, one leaves the database.
        await t.resend.contacts.create({ email: 'latecomer@example.com', segments: [{ id: segment }] });
        const last = await t.ctx.db.selectFrom('broadcast_recipients').select('contact_id').where('broadcast_id', '=', id).orderBy('contact_id', 'desc').executeTakeFirstOrThrow();
        await t.resend.contacts.remove(last.contact_id);

        // Once the dead worker's heartbeat is stale, another worker takes its job over.
        outliveKilledWorkers(t);
        const second = await startWorker(t);
        try {
          await eventually(async () => (await t.resend.broadcasts.get(id)).data?.status === 'sent' || undefined, 60_000);
        } finally {
          await second.stop();
        }
        assert.deepEqual(await emailsOf(t, id), { count: n - 1, distinct: n - 1 }, 'each remaining contact exactly once');
        const late = await t.ctx.db.selectFrom('emails').select('id').where('to', '=', '["latecomer@example.com"]').execute();
        assert.deepEqual(late, [], 'a contact added after the send started is not included');
      } finally {
        await t.close();
      }
    });

    it('a worker whose job was taken over writes nothing; the holder writes every chunk, the last one exactly', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        const n = 2 * CHUNK_RECIPIENTS + 1;
        const segment = await segmentOf(t, n);
        const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true });
        await t.ctx.db.updateTable('jobs').set({ locked_by: 'worker-b', locked_at: t.clock.now(), attempts: 1 }).execute();
        const job = await t.ctx.db.selectFrom('jobs').selectAll().executeTakeFirstOrThrow();

        await runByHand(t.ctx, job, 'worker-a');
        assert.equal((await t.resend.broadcasts.get(data!.id)).data!.status, 'queued');
        assert.equal((await emailsOf(t, data!.id)).count, 0);
        const after = await t.ctx.db.selectFrom('jobs').select('locked_by').executeTakeFirstOrThrow();
        assert.equal(after.locked_by, 'worker-b', 'the job is left to the worker that holds it');

        await runByHand(t.ctx, job);
        const sent = (await t.resend.broadcasts.get(data!.id)).data!;
        assert.equal(sent.status, 'sent');
        assert.deepEqual(await emailsOf(t, data!.id), { count: n, distinct: n });
        assert.equal(await sendJobCount(t), n, 'one send job per email');
        assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('task', '=', 'send-broadcast').executeTakeFirst(), undefined);

        const empty = (await t.resend.segments.create({ name: 'Empty' })).data!.id;
        const { data: none } = await t.resend.broadcasts.create({ segmentId: empty, ...content, send: true });
        await t.ctx.db.updateTable('jobs').set({ locked_by: 'worker-c', locked_at: t.clock.now() }).where('task', '=', 'send-broadcast').execute();
        await runByHand(t.ctx, await t.ctx.db.selectFrom('jobs').selectAll().where('task', '=', 'send-broadcast').executeTakeFirstOrThrow());
        assert.equal((await t.resend.broadcasts.get(none!.id)).data!.status, 'sent', 'an empty segment is sent to nobody');
      } finally {
        await t.close();
      }
    });

    it('a queued broadcast canceled after its job was claimed is not fanned out', async () => {
      const t = await startApp(dialect, { worker: false });
      try {
        const segment = await segmentOf(t, 3);
        const { data } = await t.resend.broadcasts.create({ segmentId: segment, ...content, send: true });
        await t.ctx.db.updateTable('jobs').set({ locked_by: 'worker-a', locked_at: t.clock.now(), attempts: 1 }).execute();
        const job = await t.ctx.db.selectFrom('jobs').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual((await t.resend.broadcasts.cancel(data!.id)).data, { object: 'broadcast', id: data!.id });
        await runByHand(t.ctx, job);
        assert.equal((await t.resend.broadcasts.get(data!.id)).data!.status, 'canceled');
        assert.equal((await emailsOf(t, data!.id)).count, 0);
      } finally {
        await t.close();
      }
    });
  });
}
