import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { exited, startMailroomProcess } from '../support/processes.ts';
import { startSmtpServer } from '../support/smtp-server.ts';
import { idOf, submissionClient } from '../support/submission.ts';

// SMTP submission in Mailroom run as `npm start` runs it: an email answered 250 survives kill -9 and
// is relayed after the restart, and Debian's swaks, an SMTP client of its own, signs in and submits.

const KEY = `re_${'s'.repeat(40)}`;
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });

const hasSwaks = spawnSync('swaks', ['--version']).status === 0;

for (const dialect of dialects) {
  describe(`SMTP submission as a process (${dialect})`, () => {
    it('relays an email answered 250 before a kill -9 once restarted, and takes one from swaks with STARTTLS, AUTH PLAIN and an attachment', async (t) => {
      const database = await createTestDatabase(dialect);
      const relay = await startSmtpServer();
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      const [port, submissionPort] = [await freePort(), await freePort()];
      const env = {
        ...configEnv(setup.ctx),
        PORT: String(port),
        HOST: '127.0.0.1',
        MAILROOM_PUBLIC_URL: `http://127.0.0.1:${port}`,
        MAILROOM_API_KEY: KEY,
        SMTP_URL: relay.url,
        SUBMISSION_PORT: String(submissionPort),
      };
      await setup.close();
      const resend = new Resend(KEY, { baseUrl: `http://127.0.0.1:${port}` });
      const up = async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok && (await listening(submissionPort));
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-swaks-'));

      // No worker at first: the email is only committed when the process dies.
      let child = startMailroomProcess(env, 'api,smtp');
      try {
        await eventually(up, 30_000);
        const client = submissionClient(submissionPort, KEY, { requireTLS: true });
        const sent = await client.sendMail({ from: 'ada@example.com', to: 'bob@example.org', subject: 'before the kill', text: 'x' });
        client.close();
        child.kill('SIGKILL');
        await exited(child);
        const id = idOf(sent.response)!;

        child = startMailroomProcess(env);
        await eventually(up, 30_000);
        await eventually(() => relay.messages.some((m) => m.parsed.subject === 'before the kill'), 30_000);
        assert.equal((await resend.emails.get(id)).data!.last_event, 'delivered');

        if (!hasSwaks) return t.diagnostic('swaks is not installed here: its part is skipped (CI installs it)');
        const file = join(dir, 'report.bin');
        const bytes = randomBytes(10_000);
        writeFileSync(file, bytes);
        const swaks = spawnSync(
          'swaks',
          [
            ...['--server', '127.0.0.1', '--port', String(submissionPort), '--tls', '--auth', 'PLAIN', '--auth-user', 'resend', '--auth-password', KEY],
            ...['--from', 'ops@example.com', '--to', 'swaks@example.org', '--header', 'Subject: via swaks', '--attach', file],
          ],
          { encoding: 'utf8', timeout: 60_000 },
        );
        assert.equal(swaks.status, 0, swaks.stdout + swaks.stderr);
        const swaksId = /<~ {1,2}250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(swaks.stdout)?.[1];
        assert.ok(swaksId, swaks.stdout);
        assert.equal((await resend.emails.get(swaksId)).data!.subject, 'via swaks');
        await eventually(() => relay.messages.some((m) => m.parsed.subject === 'via swaks'), 30_000);
        const arrived = relay.messages.find((m) => m.parsed.subject === 'via swaks')!;
        assert.deepEqual(arrived.parsed.attachments[0]!.content, bytes);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        rmSync(dir, { recursive: true, force: true });
        await relay.close();
        await database.drop();
      }
    });
  });
}
