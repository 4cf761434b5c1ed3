import type { Context } from '../context.ts';
import { faultOf } from '../store/availability.ts';
import type { Tx } from '../store/db.ts';
import { completeHeldJob, postponeHeldJob, renewJobLock, retryHeldJob, type ClaimedJob } from '../store/jobs.ts';
import { backoffMs, type Attempt, type Ending, type TaskDeclaration, type TaskName, type TaskResult } from './task.ts';

// One attempt at a claimed job: its task runs, then the job's end and the task's writes commit in one
// transaction, only while this worker still holds the job (another may have taken it over, or a stop
// handed it back): the one place that checks.

/** The attempt its task sees: the payload, whether it is the last, and a checkpoint for long tasks. */
export function attemptOf<T extends TaskName>(ctx: Context, declaration: TaskDeclaration<T>, job: ClaimedJob, workerId: string): Attempt<T> {
  return {
    payload: job.payload as Attempt<T>['payload'],
    number: job.attempts,
    last: isLast(ctx, declaration, job),
    checkpoint: (write) =>
      ctx.writer.transaction(async (tx) => {
        if (!(await renewJobLock(tx, job.id, workerId, ctx.clock.now()))) return false;
        await write(tx);
        return true;
      }),
  };
}

/** Whether this attempt is the job's last: no retry follows it. */
export const isLast = (ctx: Context, declaration: TaskDeclaration<TaskName>, job: ClaimedJob) => job.attempts >= declaration.attempts(ctx.config);

/** A retry on the last attempt fails the job. */
function settled(ending: Ending, last: boolean): Ending {
  return ending.end === 'retry' && last ? { end: 'fail', error: ending.error } : ending;
}

/** Ends the job as `ending` says, while `workerId` holds it: false, and nothing done, once it does not. */
function endHeldJob(tx: Tx, job: ClaimedJob, workerId: string, ending: Ending, backoff: (attempt: number) => number, now: number): Promise<boolean> {
  switch (ending.end) {
    case 'done':
    case 'fail':
      return completeHeldJob(tx, job.id, workerId);
    case 'retry':
      return retryHeldJob(tx, job.id, workerId, ending.at ?? now + backoff(job.attempts), ending.error);
    case 'postpone':
      return postponeHeldJob(tx, job.id, workerId, ending.until);
  }
}

/**
 * Commits what an attempt answered: the job's end first (the check that it is still this worker's), then
 * the task's writes, in one transaction. Writes that throw (a check they repeat found the work may not
 * go on: a quota spent meanwhile) roll back with the end; the attempt then ends as a retry, as a task
 * that throws does. A job that fails for good is logged.
 */
export async function finishAttempt(ctx: Context, declaration: TaskDeclaration<TaskName> | undefined, job: ClaimedJob, workerId: string, result: TaskResult): Promise<void> {
  try {
    await commitAttempt(ctx, declaration, job, workerId, result);
  } catch (error) {
    if (!result.write || faultOf(error)) throw error;
    ctx.log.warn({ err: error, job: job.id, task: job.task, attempts: job.attempts }, 'the writes of a job failed; retrying it');
    await commitAttempt(ctx, declaration, job, workerId, { ending: { end: 'retry', error: String(error) } });
  }
}

async function commitAttempt(ctx: Context, declaration: TaskDeclaration<TaskName> | undefined, job: ClaimedJob, workerId: string, result: TaskResult): Promise<void> {
  const ending = declaration ? settled(result.ending, isLast(ctx, declaration, job)) : result.ending;
  const backoff = declaration?.backoffMs ?? backoffMs;
  const ended = await ctx.writer.transaction(async (tx) => {
    if (!(await endHeldJob(tx, job, workerId, ending, backoff, ctx.clock.now()))) return false;
    await result.write?.(tx);
    return true;
  });
  if (ended && ending.end === 'fail') {
    ctx.log.error({ job: job.id, task: job.task, attempts: job.attempts, error: ending.error }, `job failed after its last attempt (${job.attempts})`);
  }
}
