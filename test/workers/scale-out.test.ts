import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { WORKER_STALE_MS } from '../../src/jobs/runner.ts';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

// Mailroom scaled out on one PostgreSQL database: two API processes and three workers deliver 10,000
// emails (single and batch) and two broadcasts to a real SMTP server, while one worker is killed
// (SIGKILL) and another stopped (SIGTERM) midway.

const KEY = `re_${'s'.repeat(40)}`;
const SINGLES = 2000;
const BATCHES = 80; // of 100
const CONTACTS = 250; // per broadcast: two broadcasts to one segment
const CONCURRENCY = 16; // per worker: at most this many sends are in flight in the killed one
const CLIENTS = 8;

describe('scale-out on PostgreSQL', { skip: !dialects.includes('postgres') && 'needs TEST_DATABASE_URL' }, () => {
  it('delivers every email once, but for what was in flight at a kill, soon after it', async (t) => {
    const arrived = new Map<string, number>();
    // Only the Message-ID is read: the test process must keep up with five Mailroom processes.
    const sink = await startSmtpServer({
      onData(stream, _session, callback) {
        let head = '';
        stream.on('data', (chunk: Buffer) => {
          if (head.length < 16_384) head += chunk.toString('latin1');
        });
        stream.on('end', () => {
          const id = /^Message-ID:\s*(<[^>]+>)/im.exec(head)?.[1] ?? 'none';
          arrived.set(id, (arrived.get(id) ?? 0) + 1);
          callback();
        });
      },
    });
    const database = await createTestDatabase('postgres');
    const setup = await startApp('postgres', { database, worker: false, env: { SMTP_URL: sink.url, MAILROOM_API_KEY: KEY } });
    const segment = (await setup.resend.segments.create({ name: 'Everyone' })).data!.id;
    for (let i = 0; i < CONTACTS; i++) await setup.resend.contacts.create({ email: `c${i}@example.com`, segments: [{ id: segment }] });
    const env = { ...configEnv(setup.ctx), HOST: '127.0.0.1', MAILROOM_API_KEY: KEY, WORKER_CONCURRENCY: String(CONCURRENCY) };
    await setup.close();

    const children: ChildProcess[] = [];
    const start = (role: string, extra: Record<string, string> = {}) => {
      const child = startMailroomProcess({ ...env, ...extra }, role);
      children.push(child);
      return child;
    };
    try {
      const apiPorts = [await freePort(), await freePort()];
      for (const port of apiPorts) start('api', { PORT: String(port) });
      const workers = [start('worker'), start('worker'), start('worker')];
      const apis = apiPorts.map((port) => new Resend(KEY, { baseUrl: `http://127.0.0.1:${port}` }));
      await eventually(async () => {
        const answers = await Promise.all(apiPorts.map((port) => fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined)));
        return answers.every((answer) => answer?.ok);
      }, 60_000);

      const accepted: string[] = [];
      let next = 0;
      const client = async (c: number) => {
        const api = apis[c % apis.length]!;
        for (let i = next++; i < SINGLES + BATCHES; i = next++) {
          if (i < SINGLES) {
            const { data, error } = await api.emails.send({ from: 'a@example.com', to: `s${i}@example.com`, subject: `#${i}`, text: 'x' });
            assert.equal(error, null);
            accepted.push(data.id);
          } else {
            const batch = Array.from({ length: 100 }, (_, j) => ({ from: 'a@example.com', to: `b${i}-${j}@example.com`, subject: `#${i}.${j}`, text: 'x' }));
            const { data, error } = await api.batch.send(batch);
            assert.equal(error, null);
            accepted.push(...data.data.map((e) => e.id));
          }
        }
      };
      const sending = Promise.all(Array.from({ length: CLIENTS }, (_, c) => client(c)));
      const broadcasts = [];
      for (const api of apis) {
        const { data, error } = await api.broadcasts.create({ segmentId: segment, from: 'a@example.com', subject: 'News', text: 'x', send: true } as never);
        assert.equal(error, null);
        broadcasts.push((data).id);
      }

      const delivered = () => [...arrived.values()].length;
      await eventually(() => delivered() >= 3000, 120_000);
      workers[0]!.kill('SIGKILL');
      workers[1]!.kill('SIGTERM');
      const killedAt = Date.now();
      const deliveredAtKill = delivered();
      await Promise.all([exited(workers[0]!), exited(workers[1]!)]);
      await sending;

      // The broadcasts' emails, as written by their fan-out, by Message-ID.
      const check = await startApp('postgres', { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      let expected: Set<string>;
      try {
        await eventually(async () => Number((await check.ctx.db.selectFrom('emails').select((eb) => eb.fn.countAll<string>().as('n')).where('broadcast_id', 'is not', null).executeTakeFirstOrThrow()).n) === 2 * CONTACTS || undefined, 60_000);
        const fannedOut = await check.ctx.db.selectFrom('emails').select('message_id').where('broadcast_id', 'is not', null).execute();
        expected = new Set([...accepted.map((id) => `<${id}@example.com>`), ...fannedOut.map((row) => row.message_id)]);
        assert.equal(expected.size, SINGLES + BATCHES * 100 + 2 * CONTACTS);
        await eventually(() => [...expected].every((id) => arrived.has(id)), WORKER_STALE_MS + 90_000);
      } finally {
        await check.close();
      }
      const killToLast = Date.now() - killedAt;
      const duplicates = [...arrived.values()].reduce((sum, n) => sum + n - 1, 0);
      t.diagnostic(`${deliveredAtKill} of ${expected.size} delivered at the kill; the last ${killToLast} ms after it; ${duplicates} delivered twice`);
      assert.deepEqual([...arrived.keys()].filter((id) => !expected.has(id)), [], 'nothing but the accepted emails arrived');
      assert.ok(duplicates <= CONCURRENCY, `at most the killed worker's ${CONCURRENCY} sends in flight were repeated (${duplicates})`);
      assert.ok([...arrived.values()].every((n) => n <= 2), 'none arrived more than twice');
      assert.equal(broadcasts.length, 2);
    } finally {
      for (const child of children) child.kill('SIGKILL');
      await Promise.all(children.map(exited));
      await sink.close();
      await database.drop();
    }
  });
});
