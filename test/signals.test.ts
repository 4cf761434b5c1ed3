import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { eventually, freePort, TEST_ENV } from './support/harness.ts';

/** Parent of every process, read from /proc: what `ps` shows, without parsing its output. */
function parents(): Map<number, number> {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses, so read after the last ')'.
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state !== 'Z') parentOf.set(Number(entry), Number(ppid));
    } catch {
      // The process ended while the list was read.
    }
  }
  return parentOf;
}

/** `pid` and every process under it. */
function tree(pid: number): number[] {
  const parentOf = parents();
  const found = [pid];
  for (let i = 0; i < found.length; i++) {
    for (const [child, parent] of parentOf) if (parent === found[i]) found.push(child);
  }
  return found;
}

const alive = (pid: number) => parents().has(pid);

/** `npm start -- ...args` on a database of its own, as an operator or a supervisor runs it. */
function npmStart(args: string[], env: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), 'mailroom-signals-'));
  const child = spawn('npm', ['start', '--', ...args], {
    env: { ...process.env, ...TEST_ENV, DATABASE_URL: join(dir, 'mailroom.db'), LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk) => (output += chunk));
  child.stderr.on('data', (chunk) => (output += chunk));
  return {
    child,
    output: () => output,
    /** Kills whatever is left of the tree (after a failure) and removes the database. */
    cleanUp(processes: number[]) {
      for (const pid of new Set([...tree(child.pid!), ...processes])) if (alive(pid)) process.kill(pid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('signals through `npm start`', () => {
  it('SIGTERM to the npm process stops the server: its port closes and every process under npm exits', async () => {
    const port = await freePort();
    const started = npmStart([], { PORT: String(port), HOST: '127.0.0.1', MAILROOM_API_KEY: `re_${'s'.repeat(40)}` });
    let processes = [started.child.pid!];
    try {
      await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined))?.ok, 30_000);
      processes = tree(started.child.pid!);
      assert.ok(processes.length >= 2, 'npm and the server');
      started.child.kill('SIGTERM');
      await eventually(() => processes.every((pid) => !alive(pid)), 30_000);
      assert.equal(await fetch(`http://127.0.0.1:${port}/health`).catch(() => 'closed'), 'closed');
    } finally {
      started.cleanUp(processes);
    }
  });

  it('the same for `npm start -- --role worker`', async () => {
    const started = npmStart(['--role', 'worker'], {});
    let processes = [started.child.pid!];
    try {
      await eventually(() => started.output().includes('Mailroom worker is running'), 30_000);
      processes = tree(started.child.pid!);
      assert.ok(processes.length >= 2, 'npm and the worker');
      started.child.kill('SIGTERM');
      await eventually(() => processes.every((pid) => !alive(pid)), 30_000);
    } finally {
      started.cleanUp(processes);
    }
  });
});
