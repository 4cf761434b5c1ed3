import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { configEnv, createTestDatabase, dialects, eventually, freePort, startApp } from '../support/harness.ts';
import { receivingDomain, sendTo } from '../support/inbound.ts';
import { exited, startMailroomProcess } from '../support/processes.ts';

// The inbound server of Mailroom run as `npm start` runs it: a message answered 250 survives kill -9,
// and Debian's swaks, a real SMTP client of its own, is understood.

const KEY = `re_${'r'.repeat(40)}`;
/** Whether something accepts connections on `port` of 127.0.0.1. */
const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });

const hasSwaks = spawnSync('swaks', ['--version']).status === 0;

for (const dialect of dialects) {
  describe(`the inbound SMTP server as a process (${dialect})`, () => {
    it('keeps a message answered 250 through kill -9, and takes one from swaks with STARTTLS and an attachment', async (t) => {
      const database = await createTestDatabase(dialect);
      const setup = await startApp(dialect, { database, worker: false, env: { MAILROOM_API_KEY: KEY } });
      await receivingDomain(setup, 'inbox.test');
      const [port, smtpPort] = [await freePort(), await freePort()];
      const env = {
        ...configEnv(setup.ctx),
        PORT: String(port),
        HOST: '127.0.0.1',
        MAILROOM_PUBLIC_URL: `http://127.0.0.1:${port}`,
        MAILROOM_API_KEY: KEY,
        INBOUND_SMTP_PORT: String(smtpPort),
      };
      await setup.close();
      const resend = new Resend(KEY, { baseUrl: `http://127.0.0.1:${port}` });
      const up = async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok && (await listening(smtpPort));
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
        const swaks = spawnSync(
          'swaks',
          ['--server', '127.0.0.1', '--port', String(smtpPort), '--tls', '--from', 'ops@sender.test', '--to', 'swaks@inbox.test', '--header', 'Subject: via swaks', '--attach', file],
          { encoding: 'utf8', timeout: 60_000 },
        );
        assert.equal(swaks.status, 0, swaks.stdout + swaks.stderr);
        const swaksId = /<~ {1,2}250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(swaks.stdout)?.[1];
        assert.ok(swaksId, swaks.stdout);
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
