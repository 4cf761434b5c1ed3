// Starts the real app on a fresh, migrated database (a SQLite file, or a PostgreSQL schema of its own),
// with a clock the test moves, and optionally the worker and a real SMTP server that records what it gets.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { Resend } from 'resend';
import { buildApp, type App } from '../../src/app.ts';
import { readConfig } from '../../src/config.ts';
import { closeContext, createContext, type Context } from '../../src/context.ts';
import { seedApiKey } from '../../src/domain/api-keys/api-keys.ts';
import type { JobRow } from '../../src/store/jobs.ts';
import type { Database } from '../../src/store/schema.ts';
import { Runner, WORKER_STALE_MS } from '../../src/jobs/runner.ts';
import { tasks } from '../../src/workers/tasks.ts';
import { attemptOf, finishAttempt } from '../../src/jobs/attempt.ts';
import type { TaskDeclaration, TaskName } from '../../src/jobs/task.ts';
import { postgresSchema } from './postgres-schema.ts';

export type Dialect = 'sqlite' | 'postgres';

/** What every test app and worker runs with, unless a test says otherwise. */
export const TEST_ENV: Record<string, string> = {
  LOG_LEVEL: 'silent',
  WORKER_POLL_MS: '50',
  MAILROOM_SECRET: 'test-secret-test-secret-test-secret-0123456789',
};

/** SQLite always; PostgreSQL too when TEST_DATABASE_URL names a database (as CI does). */
export const dialects: Dialect[] = process.env.TEST_DATABASE_URL ? ['sqlite', 'postgres'] : ['sqlite'];

export class TestClock {
  constructor(private ms = Date.now()) {}
  now(): number {
    return this.ms;
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A database of its own for one test app: a temp SQLite file, or a fresh schema on TEST_DATABASE_URL. */
export async function createTestDatabase(dialect: Dialect): Promise<TestDatabase> {
  if (dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'mailroom-test-'));
    return { url: join(dir, 'mailroom.db'), drop: async () => rmSync(dir, { recursive: true, force: true }) };
  }
  return postgresSchema(process.env.TEST_DATABASE_URL!, 'test');
}

export interface TestApp {
  url: string;
  token: string;
  resend: Resend;
  ctx: Context;
  clock: TestClock;
  app: App;
  runner: Runner | undefined;
  database: TestDatabase;
  /** Raw HTTP, for what the SDK cannot send; the API key is sent unless `headers` overrides it. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** Moves the clock and lets the worker look for jobs that became due. */
  advance(ms: number): void;
  close(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  worker?: boolean;
  database?: TestDatabase;
  /** The app's logger; by default one at TEST_LOG_LEVEL (silent). */
  log?: pino.Logger;
}

export async function startApp(dialect: Dialect, options: StartOptions = {}): Promise<TestApp> {
  const database = options.database ?? (await createTestDatabase(dialect));
  const config = readConfig({ ...TEST_ENV, ...options.env, DATABASE_URL: database.url, PORT: '0' });
  const clock = new TestClock();
  const ctx = await createContext(config, { clock, log: options.log ?? pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }) });
  const token = (await seedApiKey(ctx)) ?? config.apiKey!;
  const app = await buildApp(ctx);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const runner = options.worker === false ? undefined : new Runner(ctx, tasks);
  runner?.start();
  return {
    url: address,
    token,
    resend: new Resend(token, { baseUrl: address }),
    ctx,
    clock,
    app,
    runner,
    database,
    fetch: (path, init = {}) =>
      fetch(`${address}${path}`, { ...init, headers: { authorization: `Bearer ${token}`, ...init.headers } }),
    advance(ms) {
      clock.advance(ms);
      runner?.wake();
    },
    async close() {
      await app.close();
      await runner?.stop(5000);
      await closeContext(ctx);
      if (!options.database) await database.drop();
    },
  };
}

/**
 * Moves the test clock to where a worker process killed before now looks dead, so that its jobs are
 * taken over: such a process stamps its heartbeat with the real clock, which runs ahead of the test's.
 */
export function outliveKilledWorkers(t: TestApp): void {
  t.advance(Math.max(0, Date.now() + WORKER_STALE_MS + 1 - t.clock.now()));
}

/** Raw HTTP with a JSON body (when given) and a JSON answer, for what the SDK cannot send or show (statuses). */
/** How many rows `table` of the app's database holds. */
export async function rowCount(t: TestApp, table: keyof Database): Promise<number> {
  const row = await t.ctx.db.selectFrom(table).select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function requestJson(t: TestApp, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const json = { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) };
  const init: RequestInit = body === undefined ? { method } : { method, ...json };
  const response = await t.fetch(path, init);
  return { status: response.status, body: await response.json() };
}

/**
 * A link the app gave out (a download link: it starts with MAILROOM_PUBLIC_URL, which tests need not
 * set), fetched as anyone would: at the app's own address, with no API key.
 */
export function followLink(t: TestApp, link: string, init?: RequestInit): Promise<Response> {
  const { publicUrl } = t.ctx.config;
  if (!link.startsWith(`${publicUrl}/`)) throw new Error(`${link} is not under the public URL ${publicUrl}`);
  return fetch(`${t.url}${link.slice(publicUrl.length)}`, init);
}

/** Polls `check` until it returns a value that is not undefined/false, or fails after `timeoutMs`. */
export async function eventually<T>(check: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** A second worker on the same database, as another machine would run it (own context and pool). */
export async function startWorker(t: TestApp, env: Record<string, string> = {}): Promise<{ runner: Runner; ctx: Context; stop(): Promise<void> }> {
  const config = readConfig({ ...configEnv(t.ctx), ...env });
  const ctx = await createContext(config, { clock: t.clock, log: pino({ level: 'silent' }) });
  const runner = new Runner(ctx, tasks);
  runner.start();
  return {
    runner,
    ctx,
    async stop() {
      await runner.stop(5000);
      await closeContext(ctx);
    },
  };
}

/** The environment that reproduces a test app's configuration, for other workers and processes. */
export function configEnv(ctx: Context): Record<string, string> {
  const { config } = ctx;
  return {
    ...TEST_ENV,
    DATABASE_URL: config.databaseUrl,
    WORKER_POLL_MS: String(config.worker.pollMs),
    WORKER_MAX_ATTEMPTS: String(config.worker.maxAttempts),
    ...(config.smtpUrl ? { SMTP_URL: config.smtpUrl } : {}),
  };
}

/**
 * Runs one attempt of a job by hand, as the worker `workerId` would (its holder; a job nobody holds is
 * first held as a claim would): its task, then the job's end with its writes, through the job seam (for
 * tests of a worker that lost its job).
 */
export async function runByHand(ctx: Context, row: JobRow, workerId = row.locked_by ?? 'by-hand'): Promise<void> {
  if (row.locked_by === null) await ctx.db.updateTable('jobs').set({ locked_by: workerId, locked_at: ctx.clock.now() }).where('id', '=', row.id).execute();
  const job = { ...row, payload: JSON.parse(row.payload) as unknown };
  const declaration = tasks[row.task as TaskName] as TaskDeclaration<TaskName>;
  await finishAttempt(ctx, declaration, job, workerId, await declaration.run(ctx, attemptOf(ctx, declaration, job, workerId)));
}

/** A TCP port free on 127.0.0.1 right now, for a process the test starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
