import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { TEST_ENV } from './support/harness.ts';

interface Ended {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `src/main.ts` with `args` and `env` (over a SQLite database of its own) until it exits. */
function start(args: string[], env: Record<string, string>): Promise<Ended> {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-start-error-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', ...args], {
    env: { ...process.env, ...TEST_ENV, LOG_LEVEL: 'info', HOST: '127.0.0.1', DATABASE_URL: join(dir, 'mailroom.db'), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // A start that does not fail is ended, and fails the test.
    timeout: 60_000,
  });
  const ended = { status: null as number | null, stdout: '', stderr: '' };
  child.stdout.on('data', (chunk) => (ended.stdout += chunk));
  child.stderr.on('data', (chunk) => (ended.stderr += chunk));
  return new Promise((resolve) =>
    child.once('close', (status) => {
      rmSync(dir, { recursive: true, force: true });
      resolve({ ...ended, status });
    }),
  );
}

/** Exits 1 with one line on stderr, `mailroom: ...`, that matches each of `says`, and nothing on stdout. */
function assertOneLine(ended: Ended, ...says: RegExp[]): void {
  assert.equal(ended.status, 1, ended.stderr);
  assert.equal(ended.stdout, '');
  const lines = ended.stderr.trim().split('\n');
  assert.equal(lines.length, 1, ended.stderr);
  assert.match(lines[0]!, /^mailroom: /);
  for (const pattern of says) assert.match(lines[0]!, pattern);
}

describe('start-up errors are one line naming the cause', { concurrency: true }, () => {
  let busy: Server;
  let busyPort: number;
  before(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    busyPort = (busy.address() as { port: number }).port;
  });
  after(() => new Promise<void>((resolve) => busy.close(() => resolve())));

  it('a misspelled flag', async () => {
    assertOneLine(await start(['--rol', 'worker'], {}), /Unknown option --rol/, /--role all, or a comma-separated list of api, worker and smtp/);
  });

  it('a port in use, for the API and for worker health checks', async () => {
    const [api, worker] = await Promise.all([
      start([], { PORT: String(busyPort) }),
      start(['--role', 'worker'], { WORKER_HEALTH_PORT: String(busyPort) }),
    ]);
    assertOneLine(api, new RegExp(`Port ${busyPort} on 127.0.0.1 is in use`), /\(PORT\)/);
    assertOneLine(worker, new RegExp(`Port ${busyPort} on 127.0.0.1 is in use`), /\(WORKER_HEALTH_PORT\)/);
  });

  it('a port in use for SMTP submission or receiving: the one line alone, no connection error logged before it', async () => {
    const [submission, inbound] = await Promise.all([
      start(['--role', 'smtp'], { SUBMISSION_PORT: String(busyPort) }),
      start(['--role', 'smtp'], { INBOUND_SMTP_PORT: String(busyPort) }),
    ]);
    assertOneLine(submission, new RegExp(`Port ${busyPort} on 127.0.0.1 is in use`), /\(SUBMISSION_PORT\)/);
    assertOneLine(inbound, new RegExp(`Port ${busyPort} on 127.0.0.1 is in use`), /\(INBOUND_SMTP_PORT\)/);
  });

  it('a SQLite file in a folder that does not exist', async () => {
    const missing = join(tmpdir(), `mailroom-missing-${process.pid}`, 'mailroom.db');
    assertOneLine(await start([], { DATABASE_URL: missing }), /DATABASE_URL/, /does not exist/);
  });

  it('an unreachable PostgreSQL: refused, or no such host; never its password', async () => {
    const [refused, unknown] = await Promise.all([
      start(['--role', 'worker'], { DATABASE_URL: 'postgres://mailroom:hunter2@127.0.0.1:1/mailroom' }),
      start(['--role', 'worker'], { DATABASE_URL: 'postgres://mailroom:hunter2@no-such-host.invalid/mailroom' }),
    ]);
    assertOneLine(refused, /PostgreSQL at 127\.0\.0\.1:1/, /connection refused/, /DATABASE_URL/);
    assertOneLine(unknown, /PostgreSQL at no-such-host\.invalid:5432/, /no such host/);
    assert.doesNotMatch(refused.stderr + unknown.stderr, /hunter2/);
  });

  it('a wrong PostgreSQL password', { skip: !process.env.TEST_DATABASE_URL && 'needs TEST_DATABASE_URL' }, async () => {
    const url = new URL(process.env.TEST_DATABASE_URL!);
    url.password = 'not-the-password';
    const ended = await start(['--role', 'worker'], { DATABASE_URL: url.toString() });
    assertOneLine(ended, new RegExp(`PostgreSQL at ${url.hostname}`), /password authentication failed/, /DATABASE_URL/);
    assert.doesNotMatch(ended.stderr, /not-the-password/);
  });
});
