import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, openSync, rmSync, statfsSync, unlinkSync, writeSync, closeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { sql } from 'kysely';
import { Resend } from 'resend';
import { eventually, freePort, startApp, TEST_ENV } from '../support/harness.ts';
import { exited } from '../support/processes.ts';
import { startSmtpServer } from '../support/smtp-server.ts';

// SQLite's faults: the disk full and the database read-only. The write that fails answers 507 or 503
// in the error shape with Retry-After; reads go on; nothing acknowledged is lost; writes work again
// once the fault passes, without a restart.

const KEY = `re_${'q'.repeat(40)}`;
const TMPFS_BYTES = 24 * 1024 * 1024;

/** Why a small file system of the test's own cannot be mounted here (a mount namespace's tmpfs), or undefined. */
function tmpfsUnavailable(): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-tmpfs-probe-'));
  try {
    const run = spawnSync('unshare', ['--mount', 'sh', '-c', `mount -t tmpfs -o size=1m mailroom-probe '${dir}'`], { encoding: 'utf8' });
    if (run.error) return `no unshare here (${run.error.message})`;
    return run.status === 0 ? undefined : `a mount namespace with a tmpfs is not allowed here: ${run.stderr.trim()}`;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Fills the file system of `dir` with one file, to the last byte it takes; returns its path. */
function fill(dir: string): string {
  const path = join(dir, 'filler');
  const fd = openSync(path, 'w');
  const chunk = Buffer.alloc(1024 * 1024);
  try {
    for (let size = chunk.length; size >= 512; ) {
      try {
        writeSync(fd, chunk, 0, size);
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ENOSPC') throw error;
        size /= 2;
      }
    }
  } finally {
    closeSync(fd);
  }
  return path;
}

const unavailable = tmpfsUnavailable();

describe('SQLite out of space', { skip: unavailable && `the disk-full test needs a tmpfs of its own: ${unavailable}` }, () => {
  it('the write that does not fit answers 507 in the error shape, reads go on, and writes work again once space is freed, without a restart; every email accepted is delivered', async () => {
    const sink = await startSmtpServer();
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-full-'));
    const port = await freePort();
    const env = { ...TEST_ENV, DATABASE_URL: join(dir, 'mailroom.db'), PORT: String(port), HOST: '127.0.0.1', MAILROOM_API_KEY: KEY, SMTP_URL: sink.url, LOG_LEVEL: 'info' };
    // The process sees a tmpfs of 24 MB at `dir`, in a mount namespace of its own; the test reaches it through /proc.
    const child = spawn('unshare', ['--mount', 'sh', '-c', `mount -t tmpfs -o size=${TMPFS_BYTES} mailroom-full '${dir}' && exec "${process.execPath}" --import tsx src/main.ts --role all`], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let [stdout, stderr] = ['', ''];
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const url = `http://127.0.0.1:${port}`;
    const resend = new Resend(KEY, { baseUrl: url });
    const mounted = `/proc/${child.pid}/root${dir}`;
    const send = (subject: string, text = 'x') =>
      fetch(`${url}/emails`, {
        method: 'POST',
        headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify({ from: 'sender@example.com', to: 'rcpt@example.net', subject, text }),
      });
    try {
      await eventually(async () => (await fetch(`${url}/health`).catch(() => undefined))?.ok, 60_000);
      assert.ok(statfsSync(mounted).blocks * statfsSync(mounted).bsize <= TMPFS_BYTES, 'the database is on the small file system');
      const accepted: string[] = [];
      for (let i = 0; i < 20; i++) {
        const response = await send(`before ${i}`);
        assert.equal(response.status, 200);
        accepted.push(((await response.json()) as { id: string }).id);
      }
      const filler = fill(mounted);

      // Large bodies need new pages at once: the first that does not fit is refused, and so are the next.
      let refusal: Response | undefined;
      for (let i = 0; i < 200 && !refusal; i++) {
        const response = await send(`full ${i}`, 'y'.repeat(200_000));
        if (response.status === 200) accepted.push(((await response.json()) as { id: string }).id);
        else refusal = response;
      }
      assert.ok(refusal, 'a write refused once the disk is full');
      assert.equal(refusal.status, 507);
      assert.equal(refusal.headers.get('retry-after'), '60');
      assert.deepEqual(await refusal.json(), {
        statusCode: 507,
        name: 'insufficient_storage',
        message: "Mailroom's database is out of space; nothing was written. Try again once space is freed.",
      });
      // Reads go on.
      const read = await resend.emails.get(accepted[0]!);
      assert.equal(read.error, null);
      assert.equal(read.data?.subject, 'before 0');
      const health = await fetch(`${url}/health`);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { database: string }).database, 'full');

      unlinkSync(filler);
      // Without a restart: the next writes fit.
      const after = await eventually(async () => {
        const response = await send('after');
        return response.status === 200 ? ((await response.json()) as { id: string }) : undefined;
      }, 30_000);
      accepted.push(after.id);
      await eventually(async () => (await fetch(`${url}/health`)).ok, 30_000);
      for (const id of accepted) {
        await eventually(async () => (await resend.emails.get(id)).data?.last_event === 'delivered', 60_000);
      }
      const delivered = new Set(sink.messages.map((m) => m.parsed.subject));
      assert.equal(delivered.size, accepted.length, 'every email accepted was delivered');
      assert.equal(child.exitCode, null, `the process still runs:\n${stderr}`);
      const lines = stdout.split('\n').filter((line) => line.includes('"the database is '));
      assert.ok(lines.length >= 2, 'the fault and its end were logged');
    } finally {
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited(child);
      await sink.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('SQLite full or read-only on the connection of the API\'s writes', () => {
  it('a transaction that does not fit (PRAGMA max_page_count) answers 507, and the next one fits once there is room, without a restart', async () => {
    const t = await startApp('sqlite', { worker: false });
    const create = (email: string) =>
      t.fetch('/contacts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email, first_name: 'x'.repeat(100) }) });
    try {
      const { data: before } = await t.resend.contacts.create({ email: 'before@example.com' });
      const { rows } = await sql<{ page_count: number }>`pragma page_count`.execute(t.ctx.db);
      // Full as SQLite sees it: no page past those the file has (SQLite ends the transaction itself then).
      await sql.raw(`pragma max_page_count = ${rows[0]!.page_count}`).execute(t.ctx.db);
      let refused: Response | undefined;
      for (let i = 0; i < 1000 && !refused; i++) {
        const response = await create(`c${i}@example.com`);
        if (!response.ok) refused = response;
      }
      assert.equal(refused?.status, 507);
      assert.equal(((await refused.json()) as { name: string }).name, 'insufficient_storage');
      assert.equal((await t.resend.contacts.get({ id: before!.id })).data?.email, 'before@example.com');

      await sql`pragma max_page_count = 1073741823`.execute(t.ctx.db);
      assert.equal((await create('after@example.com')).status, 201);
    } finally {
      await t.close();
    }
  });


  it('the write refused answers 503 in the error shape, reads go on, and writes work again once it is writable, without a restart', async () => {
    const t = await startApp('sqlite', { worker: false });
    try {
      const { data: before } = await t.resend.contacts.create({ email: 'before@example.com' });
      // What SQLite answers when the file takes no writes (SQLITE_READONLY), on the connection of the API's writes.
      await sql`pragma query_only = 1`.execute(t.ctx.db);
      const refused = await t.fetch('/contacts', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ email: 'during@example.com' }) });
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '5');
      assert.deepEqual(await refused.json(), {
        statusCode: 503,
        name: 'service_unavailable',
        message: "Mailroom's database takes no writes right now (a failover or maintenance); try again in a few seconds.",
      });
      assert.equal((await t.resend.contacts.get({ id: before!.id })).data?.email, 'before@example.com');
      const health = await fetch(`${t.url}/health`);
      assert.equal(health.status, 503);
      assert.equal(((await health.json()) as { database: string }).database, 'read_only');

      await sql`pragma query_only = 0`.execute(t.ctx.db);
      const { data: after, error } = await t.resend.contacts.create({ email: 'after@example.com' });
      assert.equal(error, null);
      assert.ok(after?.id);
      await eventually(async () => (await fetch(`${t.url}/health`)).ok);
    } finally {
      await t.close();
    }
  });
});
