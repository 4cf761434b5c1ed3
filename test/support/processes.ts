// Mailroom as its own process, as `npm start` runs it, for the tests that kill it.
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { Resend } from 'resend';
import type { Context } from '../../src/context.ts';
import { configEnv } from './harness.ts';

export function startMailroomProcess(env: Record<string, string>, role = 'all'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', role], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

/** Resolves once `child` has exited (at once if it has). */
export const exited = (child: ChildProcess) =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));

/** Whether something accepts connections on `port` of 127.0.0.1. */
export const listening = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => resolve(true)).once('error', () => resolve(false));
    socket.once('connect', () => socket.destroy());
  });

/** The swaks tests' `skip` option: they need Debian's swaks (a real SMTP client of its own; CI installs it), and say so when there is none. */
export const withSwaks = {
  skip: spawnSync('swaks', ['--version']).status === 0 ? false : 'no swaks here (apt install swaks): the swaks tests are skipped',
};

/**
 * A Mailroom process on `port` of 127.0.0.1 with the database and secret of `ctx` and the API key `key`:
 * its environment, an SDK client for it, and whether it is up (the API, and `smtpPort` if given).
 */
export function mailroomProcess(ctx: Context, port: number, key: string, env: Record<string, string>, smtpPort?: number) {
  return {
    env: { ...configEnv(ctx), PORT: String(port), HOST: '127.0.0.1', MAILROOM_PUBLIC_URL: `http://127.0.0.1:${port}`, MAILROOM_API_KEY: key, ...env },
    resend: new Resend(key, { baseUrl: `http://127.0.0.1:${port}` }),
    up: async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok && (smtpPort === undefined || (await listening(smtpPort))),
  };
}

/** Runs swaks with `args`; the id of its message's `250 2.0.0 OK <id>` reply. */
export function swaks(args: string[]): string {
  const run = spawnSync('swaks', ['--server', '127.0.0.1', ...args], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, run.stdout + run.stderr);
  const id = /<~ {1,2}250 2\.0\.0 OK ([0-9a-f-]{36})/.exec(run.stdout)?.[1];
  assert.ok(id, run.stdout);
  return id;
}
