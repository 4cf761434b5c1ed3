import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import type { Tx } from '../store/db.ts';

// The job seam's contract with a task: a task declares its attempts and runs one attempt, answering
// what happened and the writes that go with it; the runner (runner.ts) commits both together, once it
// has checked the job is still this worker's. No task ends, retries or renews a job itself.

/** Every task a worker runs, by name, with the payload its jobs carry. */
export interface TaskPayloads {
  'send-email': { email_id: string };
  'send-broadcast': { broadcast_id: string };
  'import-contacts': { import_id: string };
  'verify-domain': { domain_id: string };
  'deliver-webhook': { message_id: string };
  retention: Record<string, never>;
  'automation-step': { step_id: string };
  'check-deliverability': Record<string, never>;
  'send-tls-reports': Record<string, never>;
  /** A gzipped TLS report (base64) for an https: address a recipient domain publishes. */
  'post-tls-report': { url: string; report: string; domain: string; day: string };
  /** A deleted project's rows: its own row is gone already. */
  'delete-project': { project_id: string };
}

export type TaskName = keyof TaskPayloads;

/**
 * How an attempt ends: `done` (the job is removed); `retry` at `at` (else after the task's backoff), or
 * `fail` when it was the last attempt; `postpone` until a time, the attempt given back (the wait was
 * ours, a throttle, not a failure); `fail`, for good (the job is removed, and the error logged).
 */
export type Ending = { end: 'done' } | { end: 'retry'; error: string; at?: number } | { end: 'postpone'; until: number } | { end: 'fail'; error: string };

/** What an attempt answers: how it ends, and what to write in the transaction that ends it. */
export interface TaskResult {
  ending: Ending;
  write?: (tx: Tx) => Promise<void>;
}

/** One attempt at a job, as its task sees it. */
export interface Attempt<T extends TaskName = TaskName> {
  payload: TaskPayloads[T];
  /** This attempt's number, from 1. */
  number: number;
  /** No attempt follows this one: a retry would fail the job. */
  last: boolean;
  /**
   * For a long task (a broadcast's fan-out, an import): commits `write` with the job's lock renewed, so
   * a crash resumes after it; false, and nothing written, once the job is no longer this worker's (taken
   * over, deleted): then the task stops.
   */
  checkpoint(write: (tx: Tx) => Promise<void>): Promise<boolean>;
}

export interface TaskDeclaration<T extends TaskName> {
  /** Attempts before a job fails; each with its reason. */
  attempts(config: Config): number;
  /** The wait before the attempt after `attempt`; exp(min(attempt, 10)) seconds when not given. */
  backoffMs?(attempt: number): number;
  run(ctx: Context, attempt: Attempt<T>): Promise<TaskResult>;
}

/** Every task, by the name its jobs carry: a new name in TaskPayloads must be here. */
export type Tasks = { [T in TaskName]: TaskDeclaration<T> };

/** exp(min(attempts, 10)) seconds: 2.7 s, 7.4 s, 20 s ... then about 6 h per attempt from the tenth on. */
export function backoffMs(attempts: number): number {
  return Math.round(Math.exp(Math.min(attempts, 10)) * 1000);
}

/** An attempt that ends the job well, with its writes. */
export const done = (write?: (tx: Tx) => Promise<void>): TaskResult => ({ ending: { end: 'done' }, write });
