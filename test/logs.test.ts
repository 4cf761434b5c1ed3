import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import pino from 'pino';
import { enqueue } from '../src/jobs/enqueue.ts';
import { Runner } from '../src/jobs/runner.ts';
import type { TaskDeclaration } from '../src/jobs/task.ts';
import { tasks } from '../src/workers/tasks.ts';
import { eventually, startApp, type TestApp } from './support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from './support/smtp-server.ts';

/** A logger that keeps its lines, parsed, as an operator's log collector would read them. */
function collectingLogger(level: string): { log: pino.Logger; lines: () => Record<string, any>[]; text: () => string } {
  const raw: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      raw.push(...chunk.toString().split('\n').filter(Boolean));
      done();
    },
  });
  return { log: pino({ level }, stream), lines: () => raw.map((line) => JSON.parse(line)), text: () => raw.join('\n') };
}

describe('logs an operator can use', () => {
  let smtp: TestSmtpServer;
  let t: TestApp;
  let logs: ReturnType<typeof collectingLogger>;
  before(async () => {
    smtp = await startSmtpServer();
    logs = collectingLogger('debug');
    t = await startApp('sqlite', { log: logs.log, env: { SMTP_URL: smtp.url, WORKER_MAX_ATTEMPTS: '3' } });
  });
  after(async () => {
    await t.close();
    await smtp.close();
  });

  it('writes one line per request: method, route, status, duration, request id and key id; never the key or the body', async () => {
    const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'Secret subject', text: 'Secret body' });
    await t.resend.emails.get(data!.id);
    await t.fetch('/nothing/here');
    const keyId = (await t.ctx.db.selectFrom('api_keys').select('id').executeTakeFirstOrThrow()).id;
    const requests = logs.lines().filter((l) => l.msg === 'request');
    const send = requests.find((l) => l.method === 'POST' && l.route === '/emails')!;
    assert.equal(send.status, 200);
    assert.equal(send.key, keyId);
    assert.equal(typeof send.ms, 'number');
    assert.equal(typeof send.reqId, 'string');
    assert.equal(send.level, 30);
    assert.ok(requests.some((l) => l.method === 'GET' && /^\/emails\/:id/.test(l.route) && l.status === 200));
    assert.ok(requests.some((l) => l.route === null && l.status === 404));
    assert.doesNotMatch(logs.text(), new RegExp(`${t.token}|Secret subject|Secret body|authorization`, 'i'));
  });

  it('logs each delivery attempt at debug and sums them up at info, with the reply that came most', async () => {
    smtp.onRecipient = () => ({ code: 421, message: '4.7.0 Too many connections, slow down' });
    const { data } = await t.resend.emails.send({ from: 'a@example.com', to: 'slow@example.net', subject: 's', text: 't' });
    await eventually(async () => (await t.resend.emails.get(data!.id)).data?.last_event === 'delivery_delayed' || undefined);
    smtp.onRecipient = () => undefined;
    const attempt = logs.lines().find((l) => l.msg === 'delivery attempt' && l.email === data!.id)!;
    assert.deepEqual([attempt.level, attempt.domain, attempt.code, attempt.outcome, attempt.attempt], [20, 'example.net', 421, 'delivery_delayed', 1]);
    t.ctx.deliveryLog.close();
    const summary = logs.lines().find((l) => / delivery outcomes in the last 10 s$/.test(l.msg))!;
    assert.equal(summary.level, 30);
    assert.ok(summary.delivery_delayed >= 1);
    assert.match(summary.top_reply, /^421 /);
  });

  it('logs a job that fails with its retry, then its last failure as an error', async () => {
    // A task that throws, declared with two attempts, run by a runner of its own.
    await t.runner!.stop(1000);
    const failing: TaskDeclaration<'send-email'> = {
      attempts: () => 2,
      run: async () => {
        throw new Error('the task broke');
      },
    };
    const runner = new Runner(t.ctx, { ...tasks, 'send-email': failing });
    try {
      await t.ctx.writer.transaction((tx) => enqueue(t.ctx, tx, 'send-email', { email_id: 'none' }, { key: 'failing' }));
      const id = (await t.ctx.db.selectFrom('jobs').select('id').where('key', '=', 'failing').executeTakeFirstOrThrow()).id;
      runner.start();
      const retry = await eventually(() => logs.lines().find((l) => l.job === id && l.level === 40));
      assert.match(retry.msg, /^job failed; retrying in 3 s$/);
      assert.match(retry.err.message, /the task broke/);
      t.clock.advance(3_000);
      runner.wake();
      const last = await eventually(() => logs.lines().find((l) => l.job === id && l.level === 50));
      assert.match(last.msg, /last attempt \(2\)/);
      assert.equal(await t.ctx.db.selectFrom('jobs').select('id').where('id', '=', id).executeTakeFirst(), undefined, 'a failed job is gone');
    } finally {
      await runner.stop(1000);
      t.runner!.start();
    }
  });
});
