// Mailroom as its own process, as `npm start` runs it, for the tests that kill it.
import { spawn, type ChildProcess } from 'node:child_process';

export function startMailroomProcess(env: Record<string, string>, role = 'all'): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', '--role', role], { env: { ...process.env, ...env }, stdio: 'ignore' });
}

/** Resolves once `child` has exited (at once if it has). */
export const exited = (child: ChildProcess) =>
  new Promise((resolve) => (child.exitCode !== null || child.signalCode !== null ? resolve(null) : child.once('exit', resolve)));
