import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { eventually, freePort, TEST_ENV } from './harness.ts';

const TOKEN = /re_[A-Za-z0-9_-]{32,}/;

/** `src/main.ts` run as `npm start` runs it, from `cwd`; stdout and stderr are kept apart, as a supervisor does. */
function startMailroom(args: string[], env: Record<string, string>, cwd = process.cwd()) {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), resolve('src/main.ts'), ...args], {
    cwd,
    env: { ...process.env, ...TEST_ENV, HOST: '127.0.0.1', LOG_LEVEL: 'info', MAILROOM_API_KEY: '', SMTP_URL: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = { stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (output.stdout += chunk));
  child.stderr.on('data', (chunk) => (output.stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    output,
    exited,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

describe('starting Mailroom', () => {
  it('a first start, as `npm start` runs it: creates ./data, its database and a key, prints where it listens and the key, and captures mail', async () => {
    const port = await freePort();
    const cwd = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    const mailroom = startMailroom([], { PORT: String(port), DATABASE_URL: '', MAILROOM_SECRET: '' }, cwd);
    try {
      const token = await eventually(() => mailroom.output.stdout.match(TOKEN)?.[0], 30_000);
      assert.match(mailroom.output.stdout, new RegExp(`listening on http://localhost:${port} \\(capture mode`));
      assert.equal(statSync(join(cwd, 'data')).mode & 0o777, 0o700);
      assert.ok(existsSync(join(cwd, 'data', 'mailroom.db')) && existsSync(join(cwd, 'data', 'secret')));

      const resend = new Resend(token, { baseUrl: `http://127.0.0.1:${port}` });
      const { data, error } = await resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'Hi', html: '<p>Hi</p>' });
      assert.equal(error, null);
      await eventually(async () => (await resend.emails.get(data!.id)).data?.last_event === 'delivered' || undefined);
    } finally {
      await mailroom.stop();
      rmSync(cwd, { recursive: true, force: true });
    }
  });

  it('a first start that fails on a port in use creates no key; the next one creates it and prints it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const env = { DATABASE_URL: join(dir, 'mailroom.db') };
    try {
      const failed = startMailroom([], { ...env, PORT: String((busy.address() as { port: number }).port) });
      assert.equal(await failed.exited, 1);
      assert.match(failed.output.stderr, /^mailroom: Port \d+ on 127\.0\.0\.1 is in use by another process \(PORT\)\n$/);
      assert.doesNotMatch(failed.output.stdout + failed.output.stderr, TOKEN);

      const next = startMailroom([], { ...env, PORT: String(await freePort()) });
      try {
        await eventually(() => TOKEN.test(next.output.stdout), 30_000);
      } finally {
        assert.equal(await next.stop(), 0);
      }
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
