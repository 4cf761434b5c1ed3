import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, it } from 'node:test';
import { Resend } from 'resend';
import { KEYS_LINE } from '../src/banner.ts';
import { eventually, freePort, TEST_ENV } from './support/harness.ts';

const TOKEN = /re_[A-Za-z0-9_-]{32,}/;

const mailroomEnv = (env: Record<string, string>) => ({ ...process.env, ...TEST_ENV, HOST: '127.0.0.1', LOG_LEVEL: 'info', MAILROOM_API_KEY: '', SMTP_URL: '', ...env });

/** The terminal test's `skip` option: it runs the process on a terminal of its own through util-linux's `script` (Debian has it). */
const withScript = {
  skip: spawnSync('script', ['--version']).status === 0 ? false : 'no script here (apt install bsdutils): the terminal test is skipped',
};

/** `src/main.ts` run as `npm start` runs it, from `cwd`; stdout and stderr are kept apart, as a supervisor does. */
function startMailroom(args: string[], env: Record<string, string>, cwd = process.cwd()) {
  const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), resolve('src/main.ts'), ...args], {
    cwd,
    env: mailroomEnv(env),
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
    /** The JSON log lines of stdout. */
    logLines: () => output.stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line) as Record<string, unknown>),
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

const started = (lines: Record<string, unknown>[]) => lines.find((line) => line.msg === 'mailroom started');

describe('starting Mailroom', () => {
  it('a first start, as `npm start` runs it: creates ./data, its database and a key, prints the key once, and captures mail', async () => {
    const port = await freePort();
    const cwd = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    const mailroom = startMailroom([], { PORT: String(port), DATABASE_URL: '', MAILROOM_SECRET: '' }, cwd);
    try {
      const token = await eventually(() => mailroom.output.stderr.match(TOKEN)?.[0], 30_000);
      // Not a terminal: the lines for a person go to stderr, and stdout carries only JSON log lines.
      assert.match(mailroom.output.stderr, new RegExp(`listening on http://localhost:${port} \\(capture mode`));
      assert.match(mailroom.output.stderr, new RegExp(`^Dashboard: http://localhost:${port}/dashboard \\(sign in with a full-access API key\\)$`, 'm'));
      // stdout and stderr are two pipes: what was written to one first may arrive second.
      const startLine = await eventually(() => started(mailroom.logLines()));
      assert.deepEqual(
        { ...startLine, time: undefined, pid: undefined, hostname: undefined },
        { level: 30, msg: 'mailroom started', role: 'all', listen: `127.0.0.1:${port}`, mode: 'capture', time: undefined, pid: undefined, hostname: undefined },
      );
      assert.doesNotMatch(mailroom.output.stdout, TOKEN, 'the key is never logged');
      assert.equal(statSync(join(cwd, 'data')).mode & 0o777, 0o700);
      assert.ok(existsSync(join(cwd, 'data', 'mailroom.db')) && existsSync(join(cwd, 'data', 'secret')));

      const resend = new Resend(token, { baseUrl: `http://127.0.0.1:${port}` });
      const { data, error } = await resend.emails.send({ from: 'a@example.com', to: 'b@example.com', subject: 'Hi', html: '<p>Hi</p>' });
      assert.equal(error, null);
      await eventually(async () => (await resend.emails.get(data.id)).data?.last_event === 'delivered' || undefined);
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
        await eventually(() => TOKEN.test(next.output.stderr), 30_000);
      } finally {
        assert.equal(await next.stop(), 0);
      }
    } finally {
      busy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('each role of a split deployment says what it does: the API its own duties, a worker its mode and relay', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-roles-'));
    const [apiPort, healthPort] = [await freePort(), await freePort()];
    const shared = { DATABASE_URL: join(dir, 'mailroom.db'), MAILROOM_HOSTNAME: 'vm' };
    // The API first: it migrates the database the worker then opens.
    const api = startMailroom(['--role', 'api'], { ...shared, PORT: String(apiPort), MAILROOM_API_KEY: `re_${'r'.repeat(40)}` });
    let worker: ReturnType<typeof startMailroom> | undefined;
    try {
      await eventually(() => api.output.stderr.includes('listening') && started(api.logLines()), 30_000);
      worker = startMailroom(['--role', 'worker'], { ...shared, SMTP_URL: 'smtp://mailer:hunter2@127.0.0.1:2525', WORKER_HEALTH_PORT: String(healthPort) });
      await eventually(() => worker!.output.stderr.includes('running') && started(worker!.logLines()), 30_000);

      assert.match(api.output.stderr, new RegExp(`^Mailroom API is listening on http://localhost:${apiPort}: it accepts and stores mail, and workers \\(--role worker\\) deliver it$`, 'm'));
      assert.doesNotMatch(api.output.stderr, /capture|relay|direct/, 'delivery is the workers’ business');
      assert.deepEqual(Object.keys(started(api.logLines())!).filter((key) => ['role', 'listen', 'mode', 'relay'].includes(key)), ['role', 'listen']);

      assert.match(worker.output.stderr, /^Mailroom worker is running \(relay mode: mail goes through 127\.0\.0\.1:2525\)$/m);
      assert.match(worker.output.stderr, new RegExp(`^Worker health checks: GET http://127\\.0\\.0\\.1:${healthPort}/health$`, 'm'));
      const workerStart = started(worker.logLines())!;
      assert.deepEqual([workerStart.role, workerStart.mode, workerStart.relay, workerStart.health], ['worker', 'relay', '127.0.0.1:2525', `127.0.0.1:${healthPort}`]);
      assert.doesNotMatch(worker.output.stdout + worker.output.stderr, /hunter2/, 'never the relay’s credentials');

      // A host name without a dot is no name for domain records: both say so, once, and log it.
      const hostnameWarnings = (lines: Record<string, unknown>[]) => lines.filter((line) => line.level === 40 && String(line.msg).startsWith('MAILROOM_HOSTNAME'));
      for (const role of [api, worker]) {
        assert.equal(role.output.stderr.match(/^Warning: MAILROOM_HOSTNAME is "vm", not a fully qualified name/gm)?.length, 1);
        await eventually(() => hostnameWarnings(role.logLines()).length > 0);
        assert.equal(hostnameWarnings(role.logLines()).length, 1);
      }

      const health = await eventually(async () => {
        const response = await fetch(`http://127.0.0.1:${healthPort}/health`);
        return response.status === 200 ? ((await response.json()) as { status: string }) : undefined;
      });
      assert.equal(health.status, 'ok');
      assert.equal(await worker.stop(), 0);
      assert.equal(await fetch(`http://127.0.0.1:${healthPort}/health`).catch(() => 'closed'), 'closed');
    } finally {
      await worker?.stop();
      await api.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('prints the banner and the new key before it answers any request: a script that waits for /health finds the key', async () => {
    const [port, submissionPort] = [await freePort(), await freePort()];
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    // stderr straight into a file: whatever the process wrote before it answered is there when the answer comes.
    const stderrFile = join(dir, 'stderr');
    const stderr = openSync(stderrFile, 'w');
    const child = spawn(process.execPath, ['--import', import.meta.resolve('tsx'), resolve('src/main.ts')], {
      // SMTP submission too: its certificate is made after the API listens, as in a full start.
      env: mailroomEnv({ PORT: String(port), DATABASE_URL: join(dir, 'mailroom.db'), SUBMISSION_PORT: String(submissionPort) }),
      stdio: ['ignore', 'ignore', stderr],
    });
    closeSync(stderr);
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      let response: Response | undefined;
      for (const deadline = Date.now() + 30_000; !response && Date.now() < deadline; ) {
        response = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      }
      assert.equal(response?.status, 200);
      assert.match(readFileSync(stderrFile, 'utf8'), /shown only this once:\n\n {2}re_[A-Za-z0-9_-]{32,}\n/);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('on a terminal: the banner first, naming `npm run keys` when the start made no key, then human log lines', withScript, async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    const command = `${process.execPath} --import ${import.meta.resolve('tsx')} ${resolve('src/main.ts')}`;
    // `script` gives the process a terminal of its own and copies what it shows to our stdout.
    const child = spawn('script', ['-qfec', command, '/dev/null'], {
      env: mailroomEnv({ PORT: String(port), DATABASE_URL: join(dir, 'mailroom.db'), MAILROOM_API_KEY: `re_${'t'.repeat(40)}` }),
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    let shown = '';
    child.stdout.on('data', (chunk) => (shown += chunk));
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      await eventually(() => /mailroom started/.test(shown), 30_000);
      const lines = shown.replace(/\x1b\[[0-9;]*m/g, '').split(/\r?\n/).filter(Boolean);
      assert.match(lines[0]!, new RegExp(`^Mailroom is listening on http://localhost:${port} \\(capture mode`));
      assert.ok(lines.includes(KEYS_LINE), shown);
      const firstLog = lines.findIndex((line) => /^\[\d{2}:\d{2}:\d{2}\.\d{3}\] INFO: /.test(line));
      assert.ok(firstLog > lines.indexOf(KEYS_LINE), shown);
      assert.ok(lines.some((line) => /INFO: mailroom started$/.test(line)), shown);
      assert.ok(!lines.some((line) => line.startsWith('{')), 'no JSON at a terminal');
    } finally {
      process.kill(-child.pid!, 'SIGTERM');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('MAILROOM_API_KEY works from the first request the port takes', async () => {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-start-'));
    const key = `re_${'k'.repeat(40)}`;
    const mailroom = startMailroom([], { PORT: String(port), DATABASE_URL: join(dir, 'mailroom.db'), MAILROOM_API_KEY: key });
    try {
      // Polled as fast as connections are refused, so the first answer of all is the one checked.
      let response: Response | undefined;
      for (const deadline = Date.now() + 30_000; !response && Date.now() < deadline; ) {
        response = await fetch(`http://127.0.0.1:${port}/api-keys`, { headers: { authorization: `Bearer ${key}` } }).catch(() => undefined);
      }
      const status = response?.status;
      await response?.arrayBuffer();
      assert.equal(status, 200);
    } finally {
      await mailroom.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
