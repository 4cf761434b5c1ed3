import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, eventually, freePort, startApp, type TestDatabase } from '../support/harness.ts';
import { exited, mailroomProcess, startMailroomProcess, swaks, withSwaks } from '../support/processes.ts';
import { startSmtpServer, type TestSmtpServer } from '../support/smtp-server.ts';
import { idOf, submissionClient } from '../support/submission.ts';

// SMTP submission in Mailroom run as `npm start` runs it: an email answered 250 survives kill -9 and
// is relayed after the restart, and Debian's swaks, an SMTP client of its own, signs in and submits.

const KEY = `re_${'s'.repeat(40)}`;

for (const dialect of dialects) {
  describe(`SMTP submission as a process (${dialect})`, () => {
    let database: TestDatabase;
    let relay: TestSmtpServer;
    let submissionPort: number;
    let mailroom: ReturnType<typeof mailroomProcess>;
    before(async () => {
      database = await createTestDatabase(dialect);
      relay = await startSmtpServer();
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      const port = await freePort();
      submissionPort = await freePort();
      mailroom = mailroomProcess(setup.ctx, port, KEY, { SMTP_URL: relay.url, SUBMISSION_PORT: String(submissionPort) }, submissionPort);
      await setup.close();
    });
    after(async () => {
      await relay.close();
      await database.drop();
    });

    it('relays an email answered 250 before a kill -9 once restarted', async () => {
      // No worker at first: the email is only committed when the process dies.
      let child = startMailroomProcess(mailroom.env, 'api,smtp');
      try {
        await eventually(mailroom.up, 30_000);
        const client = submissionClient(submissionPort, KEY, { requireTLS: true });
        const sent = await client.sendMail({ from: 'ada@example.com', to: 'bob@example.org', subject: 'before the kill', text: 'x' });
        client.close();
        child.kill('SIGKILL');
        await exited(child);
        const id = idOf(sent.response)!;

        child = startMailroomProcess(mailroom.env);
        await eventually(mailroom.up, 30_000);
        await eventually(() => relay.messages.some((m) => m.parsed.subject === 'before the kill'), 30_000);
        // The relay's 250 comes before the worker records it.
        await eventually(async () => (await mailroom.resend.emails.get(id)).data?.last_event === 'delivered', 30_000);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
      }
    });

    it('takes an email from swaks with STARTTLS, AUTH PLAIN and an attachment, and relays it', withSwaks, async () => {
      const child = startMailroomProcess(mailroom.env);
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-swaks-'));
      try {
        await eventually(mailroom.up, 30_000);
        const file = join(dir, 'report.bin');
        const bytes = randomBytes(10_000);
        writeFileSync(file, bytes);
        const swaksId = swaks([
          ...['--port', String(submissionPort), '--tls', '--auth', 'PLAIN', '--auth-user', 'resend', '--auth-password', KEY],
          ...['--from', 'ops@example.com', '--to', 'swaks@example.org', '--header', 'Subject: via swaks', '--attach', file],
        ]);
        assert.equal((await mailroom.resend.emails.get(swaksId)).data!.subject, 'via swaks');
        await eventually(() => relay.messages.some((m) => m.parsed.subject === 'via swaks'), 30_000);
        const arrived = relay.messages.find((m) => m.parsed.subject === 'via swaks')!;
        assert.deepEqual(arrived.parsed.attachments[0]!.content, bytes);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
