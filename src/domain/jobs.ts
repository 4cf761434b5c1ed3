import type { Config } from '../config.ts';
import type { Context } from '../context.ts';
import { newId } from '../ids.ts';
import type { Tx } from '../store/db.ts';
import * as store from '../store/jobs.ts';

/** Every task a worker runs, by name, with the payload its jobs carry. */
export interface TaskPayloads {
  'send-email': { email_id: string };
  'send-broadcast': { broadcast_id: string };
  'import-contacts': { import_id: string };
  'verify-domain': { domain_id: string };
  'deliver-webhook': { message_id: string };
  retention: Record<string, never>;
  'automation-step': { step_id: string };
}

export type TaskName = keyof TaskPayloads;

/** A job as its task receives it: its payload typed. */
export interface Job<T extends TaskName = TaskName> extends Omit<store.JobRow, 'task' | 'payload'> {
  task: T;
  payload: TaskPayloads[T];
}

/**
 * Each task's retry policy: how many attempts its jobs get before they fail for good. Between two
 * attempts the runner waits exp(min(attempts, 10)) seconds, for every task.
 */
const ATTEMPTS: { [T in TaskName]: (config: Config) => number } = {
  'send-email': (config) => config.worker.maxAttempts,
  'send-broadcast': (config) => config.worker.maxAttempts,
  'import-contacts': (config) => config.worker.maxAttempts,
  // The 72-hour window ends the checks (domain-verification.ts), not the count: about 20 at most.
  'verify-domain': () => 1000,
  // The schedule ends the attempts (workers/deliver-webhook.ts), not the count.
  'deliver-webhook': () => 1000,
  // A failing run tries again with backoff; the job must outlive a long outage, as nothing re-adds it.
  retention: () => 1000,
  // A step's work is one transaction: what fails is the database, worth retrying for a while.
  'automation-step': (config) => config.worker.maxAttempts,
};

/** The key that names the one job of `task` for an entity (its email, broadcast...), for later changes. */
export const jobKey = (task: TaskName, id: string) => `${task}:${id}`;

export interface EnqueueOptions {
  /** Names the job for later changes (move, cancel); unique while the job exists. */
  key?: string;
  /** When it is due; now by default. */
  runAt?: number;
}

/** A job row, for the writes that insert many at once with their emails (POST /emails, a broadcast's fan-out). */
export function jobRow<T extends TaskName>(ctx: Context, task: T, payload: TaskPayloads[T], options: EnqueueOptions = {}): store.JobRow {
  const now = ctx.clock.now();
  return {
    id: newId(),
    task,
    key: options.key ?? null,
    payload: JSON.stringify(payload),
    run_at: options.runAt ?? now,
    attempts: 0,
    max_attempts: ATTEMPTS[task](ctx.config),
    locked_by: null,
    locked_at: null,
    last_error: null,
    created_at: now,
  };
}

/**
 * Wakes this process's workers once `tx` has committed: what it added or moved may be due now (for
 * jobs written with other rows; enqueue, replace and move do it themselves).
 */
export function wakeAfterCommit(ctx: Context, tx: Tx): void {
  ctx.writer.afterCommit(tx, () => ctx.jobsAdded.notify());
}

/** The one way to add work: a job for `task`, written in the caller's transaction. */
export async function enqueue<T extends TaskName>(ctx: Context, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions = {}): Promise<void> {
  await store.addJobs(tx, [jobRow(ctx, task, payload, options)]);
  wakeAfterCommit(ctx, tx);
}

/**
 * Adds a job for `task` under `key` unless one with that key exists: a duty that must exist once, however
 * many processes start. True when added.
 */
export async function ensure<T extends TaskName>(ctx: Context, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions & { key: string }): Promise<boolean> {
  const added = await store.addJobUnlessKeyed(tx, jobRow(ctx, task, payload, options));
  if (added) wakeAfterCommit(ctx, tx);
  return added;
}

/**
 * Adds a job for `task` under `key`, replacing a waiting one with that key; a job with that key that a
 * worker holds right now is left alone (it is doing the work already).
 */
export async function replace<T extends TaskName>(ctx: Context, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions & { key: string }): Promise<void> {
  await store.replaceJob(tx, jobRow(ctx, task, payload, options));
  wakeAfterCommit(ctx, tx);
}

/** Moves the waiting job named `key` to `runAt`; false when it is running or gone. */
export async function move(ctx: Context, tx: Tx, key: string, runAt: number): Promise<boolean> {
  const moved = await store.moveJob(tx, key, runAt);
  if (moved) wakeAfterCommit(ctx, tx);
  return moved;
}
