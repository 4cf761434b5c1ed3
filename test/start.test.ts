import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { eventually, freePort } from './harness.ts';

describe('a first start, as `npm start` runs it', () => {
  it('creates its folder, database and key, prints where it listens and the key, and captures mail', async () => {
    const port = await freePort();
    const dir = join(mkdtempSync(join(tmpdir(), 'mailroom-start-')), 'data');
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
      env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: join(dir, 'mailroom.db'), LOG_LEVEL: 'warn', MAILROOM_SECRET: '', MAILROOM_API_KEY: '', SMTP_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    try {
      const token = await eventually(() => output.match(/re_[A-Za-z0-9_-]{32,}/)?.[0], 20_000);
      assert.match(output, new RegExp(`listening on http://localhost:${port} \\(capture mode`));
      const resend = new Resend(token, { baseUrl: `http://127.0.0.1:${port}` });
      const { data, error } = await resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'Hi', html: '<p>Hi</p>' });
      assert.equal(error, null);
      await eventually(async () => (await resend.emails.get(data!.id)).data?.last_event === 'delivered' || undefined);
    } finally {
      child.kill('SIGTERM');
      await new Promise((resolve) => child.once('exit', resolve));
    }
  });
});
