import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createTestDatabase, dialects, eventually, freePort, startApp, type TestDatabase } from '../support/harness.ts';
import { receivingDomain, sendTo } from '../support/inbound.ts';
import { exited, mailroomProcess, startMailroomProcess, swaks, withSwaks } from '../support/processes.ts';

// The inbound server of Mailroom run as `npm start` runs it: a message answered 250 survives kill -9,
// and Debian's swaks, a real SMTP client of its own, is understood.

const KEY = `re_${'r'.repeat(40)}`;

for (const dialect of dialects) {
  describe(`the inbound SMTP server as a process (${dialect})`, () => {
    let database: TestDatabase;
    let smtpPort: number;
    let mailroom: ReturnType<typeof mailroomProcess>;
    before(async () => {
      database = await createTestDatabase(dialect);
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      await receivingDomain(setup, 'inbox.test');
      const port = await freePort();
      smtpPort = await freePort();
      mailroom = mailroomProcess(setup.ctx, port, KEY, { INBOUND_SMTP_PORT: String(smtpPort) }, smtpPort);
      await setup.close();
    });
    after(() => database.drop());

    it('keeps a message answered 250 through kill -9', async () => {
      let child = startMailroomProcess(mailroom.env, 'api,smtp');
      try {
        await eventually(mailroom.up, 30_000);
        const sent = await sendTo(smtpPort, { from: 'a@sender.test', to: 'kill@inbox.test', subject: 'before the kill', text: 'x' });
        child.kill('SIGKILL');
        await exited(child);
        const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;

        child = startMailroomProcess(mailroom.env, 'api,smtp');
        await eventually(mailroom.up, 30_000);
        const { data } = await mailroom.resend.emails.receiving.get(id);
        assert.equal(data!.subject, 'before the kill');
      } finally {
        child.kill('SIGKILL');
        await exited(child);
      }
    });

    it('takes a message from swaks with STARTTLS and an attachment', withSwaks, async () => {
      const child = startMailroomProcess(mailroom.env, 'api,smtp');
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-swaks-'));
      try {
        await eventually(mailroom.up, 30_000);
        const file = join(dir, 'report.bin');
        const bytes = randomBytes(10_000);
        writeFileSync(file, bytes);
        const swaksId = swaks(['--port', String(smtpPort), '--tls', '--from', 'ops@sender.test', '--to', 'swaks@inbox.test', '--header', 'Subject: via swaks', '--attach', file]);
        const received = await mailroom.resend.emails.receiving.get(swaksId);
        assert.equal(received.data!.subject, 'via swaks');
        assert.match(received.data!.headers!.received!, /with ESMTPS/);
        const attachment = received.data!.attachments[0]!;
        assert.equal(attachment.filename, 'report.bin');
        const { data: link } = await mailroom.resend.emails.receiving.attachments.get({ emailId: swaksId, id: attachment.id });
        assert.deepEqual(Buffer.from(await (await fetch(link!.download_url)).arrayBuffer()), bytes);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        rmSync(dir, { recursive: true, force: true });
      }
    });
  });
}
