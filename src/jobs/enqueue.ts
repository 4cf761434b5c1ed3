import type { Context } from '../context.ts';
import { newId } from '../time/ids.ts';
import type { Db, Tx } from '../store/db.ts';
import * as store from '../store/jobs.ts';
import type { TaskName, TaskPayloads } from './task.ts';

// The one way to add, move and remove work: a job for a task, written in the caller's transaction. A
// commit that adds or moves jobs wakes the workers by itself (store/writer.ts).

/** A job as written: for the writes that insert jobs with other rows (insert-rows.ts). */
export type JobRow = store.JobRow;

/** The key that names the one job of `task` for an entity (its email, broadcast...), for later changes. */
export const jobKey = (task: TaskName, id: string) => `${task}:${id}`;

export interface EnqueueOptions {
  /** Names the job for later changes (move, cancel); unique while the job exists. */
  key?: string;
  /** When it is due; now by default. */
  runAt?: number;
}

/** A job row, for the writes that insert many at once with their emails (POST /emails, a broadcast's fan-out). */
export function jobRow<T extends TaskName>(ctx: Pick<Context, 'clock'>, task: T, payload: TaskPayloads[T], options: EnqueueOptions = {}): store.JobRow {
  const now = ctx.clock.now();
  return {
    id: newId(),
    task,
    key: options.key ?? null,
    payload: JSON.stringify(payload),
    run_at: options.runAt ?? now,
    attempts: 0,
    locked_by: null,
    locked_at: null,
    last_error: null,
    created_at: now,
  };
}

/** The one way to add work: a job for `task`, written in the caller's transaction. */
export async function enqueue<T extends TaskName>(ctx: Pick<Context, 'clock'>, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions = {}): Promise<void> {
  await store.addJobs(tx, [jobRow(ctx, task, payload, options)]);
}

/**
 * Adds a job for `task` under `key` unless one with that key exists: a duty that must exist once, however
 * many processes start. True when added.
 */
export function ensure<T extends TaskName>(ctx: Pick<Context, 'clock'>, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions & { key: string }): Promise<boolean> {
  return store.addJobUnlessKeyed(tx, jobRow(ctx, task, payload, options));
}

/**
 * Adds a job for `task` under `key`, replacing a waiting one with that key; a job with that key that a
 * worker holds right now is left alone (it is doing the work already).
 */
export function replace<T extends TaskName>(ctx: Pick<Context, 'clock'>, tx: Tx, task: T, payload: TaskPayloads[T], options: EnqueueOptions & { key: string }): Promise<void> {
  return store.replaceJob(tx, jobRow(ctx, task, payload, options));
}

/** Moves the waiting job named `key` to `runAt`; false when it is running or gone. */
export const move = (tx: Tx, key: string, runAt: number): Promise<boolean> => store.moveJob(tx, key, runAt);

/** Removes the waiting job named `key`; false when it is running or gone. */
export const cancel = (tx: Tx, key: string): Promise<boolean> => store.cancelJob(tx, key);

/**
 * Removes the jobs named `keys`, even one a worker holds: that worker's next checkpoint or ending finds
 * it gone and writes nothing (a canceled broadcast's fan-out stops).
 */
export const remove = (tx: Tx, keys: string[]): Promise<void> => store.deleteJobs(tx, keys);

/** Per task, the jobs due now that no worker holds, and how long the oldest has waited (the queue gauges). */
export const dueJobs = (db: Db, now: number) => store.dueJobsByTask(db, now);
