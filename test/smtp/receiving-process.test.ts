import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { receivingDomain, sendTo } from '../support/inbound.ts';
import { exited, hasSwaks, mailroomProcess, startMailroomProcess, swaks } from '../support/processes.ts';

// The inbound server of Mailroom run as `npm start` runs it: a message answered 250 survives kill -9,
// and Debian's swaks, a real SMTP client of its own, is understood.

const KEY = `re_${'r'.repeat(40)}`;

for (const dialect of dialects) {
  describe(`the inbound SMTP server as a process (${dialect})`, () => {
    it('keeps a message answered 250 through kill -9, and takes one from swaks with STARTTLS and an attachment', async (t) => {
      const database = await createTestDatabase(dialect);
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      await receivingDomain(setup, 'inbox.test');
      const [port, smtpPort] = [await freePort(), await freePort()];
      const { env, resend, up } = mailroomProcess(setup.ctx, port, KEY, { INBOUND_SMTP_PORT: String(smtpPort) }, smtpPort);
      await setup.close();
      const dir = mkdtempSync(join(tmpdir(), 'mailroom-swaks-'));

      let child = startMailroomProcess(env, 'api,smtp');
      try {
        await eventually(up, 30_000);
        const sent = await sendTo(smtpPort, { from: 'a@sender.test', to: 'kill@inbox.test', subject: 'before the kill', text: 'x' });
        child.kill('SIGKILL');
        await exited(child);
        const id = /OK ([0-9a-f-]{36})$/.exec(sent.response)![1]!;

        child = startMailroomProcess(env, 'api,smtp');
        await eventually(up, 30_000);
        const { data } = await resend.emails.receiving.get(id);
        assert.equal(data!.subject, 'before the kill');

        if (!hasSwaks) return t.diagnostic('swaks is not installed here: its part is skipped (CI installs it)');
        const file = join(dir, 'report.bin');
        const bytes = randomBytes(10_000);
        writeFileSync(file, bytes);
        const swaksId = swaks(['--port', String(smtpPort), '--tls', '--from', 'ops@sender.test', '--to', 'swaks@inbox.test', '--header', 'Subject: via swaks', '--attach', file]);
        const received = await resend.emails.receiving.get(swaksId);
        assert.equal(received.data!.subject, 'via swaks');
        assert.match(received.data!.headers!.received!, /with ESMTPS/);
        const attachment = received.data!.attachments[0]!;
        assert.equal(attachment.filename, 'report.bin');
        const { data: link } = await resend.emails.receiving.attachments.get({ emailId: swaksId, id: attachment.id });
        assert.deepEqual(Buffer.from(await (await fetch(link!.download_url)).arrayBuffer()), bytes);
      } finally {
        child.kill('SIGKILL');
        await exited(child);
        rmSync(dir, { recursive: true, force: true });
        await database.drop();
      }
    });
  });
}
