import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../test/support/harness.ts';

export const BENCH_KEY = `re_${'b'.repeat(40)}`;

export interface Mailroom {
  url: string;
  databaseUrl: string;
  /** The pid of the first (API) process, to read its memory. */
  pid: number;
  /** Every process's pid: the first, then the workers'. */
  pids: number[];
  stop(): Promise<void>;
}

/** Node's arguments in `npm start` (`exec node <these>`): its V8 flags, the loader and the program. */
const START = (JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: { start: string } }).scripts.start.split(' ').slice(2);

function launch(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(process.execPath, [...START, ...args], {
    // The defaults, as `npm start` runs (logs at info included), unless a bench says otherwise.
    env: { ...process.env, MAILROOM_API_KEY: BENCH_KEY, ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

/** A `--role worker` process on `databaseUrl`, started apart (after work was queued, say): its stop, which carries its pid. */
export function startWorkerProcess(databaseUrl: string, env: Record<string, string> = {}): (() => Promise<void>) & { pid: number } {
  const child = launch(['--role', 'worker'], { DATABASE_URL: databaseUrl, ...env });
  const stop = () => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.once('exit', () => resolve()), child.kill('SIGTERM'))));
  return Object.assign(stop, { pid: child.pid! });
}

/**
 * Starts Mailroom as a user would: one `--role api` process (or `all`) and `workers` extra
 * `--role worker` processes, on a fresh SQLite file, or on `databaseUrl` (which stop() then keeps).
 */
export async function startMailroom(options: { env?: Record<string, string>; workers?: number; role?: string; databaseUrl?: string }): Promise<Mailroom> {
  const dir = options.databaseUrl === undefined ? mkdtempSync(join(tmpdir(), 'mailroom-bench-')) : undefined;
  const databaseUrl = options.databaseUrl ?? join(dir!, 'mailroom.db');
  const port = await freePort();
  const env = { DATABASE_URL: databaseUrl, PORT: String(port), HOST: '127.0.0.1', ...options.env };
  const processes = [launch(['--role', options.role ?? 'all'], env)];
  const url = `http://127.0.0.1:${port}`;
  for (;;) {
    const ok = await fetch(`${url}/health`).then((r) => r.ok, () => false);
    if (ok) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  for (let i = 0; i < (options.workers ?? 0); i++) processes.push(launch(['--role', 'worker'], env));
  return {
    url,
    databaseUrl,
    pid: processes[0]!.pid!,
    pids: processes.map((p) => p.pid!),
    async stop() {
      await Promise.all(
        processes.map((p) => new Promise((resolve) => (p.exitCode !== null ? resolve(null) : (p.once('exit', resolve), p.kill('SIGTERM'))))),
      );
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
