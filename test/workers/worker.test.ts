import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { configEnv, dialects, eventually, freePort, outliveKilledWorkers, startApp, startWorker, type TestApp } from '../support/harness.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';

const email = (i: number) => ({ from: 'a@example.com', to: `user${i}@example.com`, subject: `#${i}`, text: 'hello' });

async function deliveredCount(t: TestApp): Promise<number> {
  const row = await t.ctx.db
    .selectFrom('emails')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('last_event', '=', 'delivered')
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

function messageIdCounts(smtp: TestSmtpServer): Map<string, number> {
  const counts = new Map<string, number>();
  for (const m of smtp.messages) counts.set(m.parsed.messageId!, (counts.get(m.parsed.messageId!) ?? 0) + 1);
  return counts;
}

function spawnMailroom(args: string[], env: Record<string, string>) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, ...env },
    stdio: 'ignore',
  });
}

for (const dialect of dialects) {
  describe(`worker runner (${dialect})`, () => {
    let smtp: TestSmtpServer;
    before(async () => {
      smtp = await startSmtpServer();
    });
    after(() => smtp.close());

    it('two workers on one database never send the same email twice', async () => {
      smtp.messages.length = 0;
      const t = await startApp(dialect, { env: { SMTP_URL: smtp.url, WORKER_CONCURRENCY: '8' } });
      const second = await startWorker(t, { WORKER_CONCURRENCY: '8' });
      try {
        await t.runner!.stop(0);
        await second.runner.stop(0);
        for (let i = 0; i < 120; i++) await t.resend.emails.send(email(i));
        t.runner!.start();
        second.runner.start();
        await eventually(async () => (await deliveredCount(t)) === 120 || undefined, 30_000);
        const counts = messageIdCounts(smtp);
        assert.equal(counts.size, 120);
        assert.ok([...counts.values()].every((n) => n === 1), 'each Message-ID arrived once');
      } finally {
        await second.stop();
        await t.close();
      }
    });

    it('survives kill -9 mid-batch: every accepted email is delivered, none twice beyond those in flight', async () => {
      smtp.messages.length = 0;
      smtp.delayMs = 30;
      const concurrency = 4;
      const t = await startApp(dialect, { worker: false, env: { SMTP_URL: smtp.url } });
      try {
        for (let i = 0; i < 60; i++) await t.resend.emails.send(email(i));
        const child = spawnMailroom(['--role', 'worker'], { ...configEnv(t.ctx), WORKER_CONCURRENCY: String(concurrency) });
        await eventually(() => smtp.messages.length >= 10 || undefined, 30_000);
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('exit', resolve));
        const beforeTakeover = await deliveredCount(t);
        assert.ok(beforeTakeover < 60, 'the worker died mid-batch');

        smtp.delayMs = 0;
        // Once the dead worker's heartbeat is stale, the next worker takes its jobs over.
        outliveKilledWorkers(t);
        const second = await startWorker(t);
        await eventually(async () => (await deliveredCount(t)) === 60 || undefined, 30_000);
        await second.stop();

        const counts = messageIdCounts(smtp);
        assert.equal(counts.size, 60, 'every email arrived');
        const duplicates = [...counts.values()].reduce((sum, n) => sum + n - 1, 0);
        assert.ok(duplicates <= concurrency, `${duplicates} duplicates, at most the ${concurrency} in flight`);
      } finally {
        smtp.delayMs = 0;
        await t.close();
      }
    });

    it('drains on SIGTERM: stops taking requests, finishes the send in flight, exits 0', async () => {
      smtp.messages.length = 0;
      smtp.delayMs = 500;
      const t = await startApp(dialect, { worker: false, env: { SMTP_URL: smtp.url } });
      const port = await freePort();
      const child = spawnMailroom([], { ...configEnv(t.ctx), PORT: String(port), HOST: '127.0.0.1', MAILROOM_API_KEY: `re_${'t'.repeat(40)}` });
      try {
        await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok, 20_000);
        const response = await fetch(`http://127.0.0.1:${port}/emails`, {
          method: 'POST',
          headers: { authorization: `Bearer re_${'t'.repeat(40)}`, 'content-type': 'application/json' },
          body: JSON.stringify(email(1)),
        });
        const { id } = (await response.json()) as { id: string };
        await eventually(async () => {
          const job = await t.ctx.db.selectFrom('jobs').select('locked_at').where('key', '=', `send-email:${id}`).executeTakeFirst();
          return job?.locked_at != null || undefined;
        });
        child.kill('SIGTERM');
        const code = await new Promise((resolve) => child.once('exit', resolve));
        assert.equal(code, 0);
        assert.equal((await t.resend.emails.get(id)).data?.last_event, 'delivered');
        assert.equal(smtp.messages.length, 1);
        assert.equal(await fetch(`http://127.0.0.1:${port}/health`).catch(() => 'closed'), 'closed');
      } finally {
        smtp.delayMs = 0;
        child.kill('SIGKILL');
        await t.close();
      }
    });
  });
}
