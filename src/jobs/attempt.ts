import type { Context } from '../context.ts';
import { faultOf } from '../store/availability.ts';
import type { Tx } from '../store/db.ts';
import { completeHeldJobs, postponeHeldJob, renewJobLock, retryHeldJob, type ClaimedJob } from '../store/jobs.ts';
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

/** An end that deletes the job: done, or failed for good. */
type Completing = Extract<Ending, { end: 'done' | 'fail' }>;

const completes = (ending: Ending): ending is Completing => ending.end === 'done' || ending.end === 'fail';

/** Retries or postpones the job as `ending` says, while `workerId` holds it: false, and nothing done, once it does not. */
function endHeldJob(tx: Tx, job: ClaimedJob, workerId: string, ending: Exclude<Ending, Completing>, backoff: (attempt: number) => number, now: number): Promise<boolean> {
  return ending.end === 'postpone'
    ? postponeHeldJob(tx, job.id, workerId, ending.until)
    : retryHeldJob(tx, job.id, workerId, ending.at ?? now + backoff(job.attempts), ending.error);
}

/**
 * Commits what an attempt answered: the job's end first (the check that it is still this worker's), then
 * the task's writes, in one transaction. Writes that throw (a check they repeat found the work may not
 * go on: a quota spent meanwhile) roll back with the end; the attempt then ends as a retry, as a task
 * that throws does. A job that fails for good is logged.
 */
export async function finishAttempt(ctx: Context, declaration: TaskDeclaration<TaskName> | undefined, job: ClaimedJob, workerId: string, result: TaskResult): Promise<void> {
  try {
    await commitAttempts(ctx, workerId, [{ declaration, job, result }]);
  } catch (error) {
    if (!result.write || faultOf(error)) throw error;
    ctx.log.warn({ err: error, job: job.id, task: job.task, attempts: job.attempts }, 'the writes of a job failed; retrying it');
    await commitAttempts(ctx, workerId, [{ declaration, job, result: { ending: { end: 'retry', error: String(error) } } }]);
  }
}

/** An attempt to end: its job, its task's declaration (none for an unknown task) and what the task answered. */
interface Finished {
  declaration: TaskDeclaration<TaskName> | undefined;
  job: ClaimedJob;
  result: TaskResult;
}

/**
 * Commits what attempts answered, in one transaction: the ends of those done or failed first, one
 * statement for all (the check that each is still this worker's), the others' ends one by one, then
 * the writes of each job still held. Resolves with the attempts it ended.
 */
async function commitAttempts(ctx: Context, workerId: string, attempts: Finished[]): Promise<(Finished & { ending: Ending })[]> {
  const now = ctx.clock.now();
  const endings = attempts.map((a) => ({ ...a, ending: a.declaration ? settled(a.result.ending, isLast(ctx, a.declaration, a.job)) : a.result.ending }));
  const ended = await ctx.writer.transaction(async (tx) => {
    const completing = endings.filter((a) => completes(a.ending)).map((a) => a.job.id);
    const completed = completing.length > 0 ? await completeHeldJobs(tx, completing, workerId) : new Set<string>();
    const held: typeof endings = [];
    for (const a of endings) {
      const backoff = a.declaration?.backoffMs ?? backoffMs;
      if (completes(a.ending) ? !completed.has(a.job.id) : !(await endHeldJob(tx, a.job, workerId, a.ending, backoff, now))) continue;
      await a.result.write?.(tx);
      held.push(a);
    }
    return held;
  });
  for (const { job, ending } of ended) {
    if (ending.end === 'fail') ctx.log.error({ job: job.id, task: job.task, attempts: job.attempts, error: ending.error }, `job failed after its last attempt (${job.attempts})`);
  }
  return ended;
}

/**
 * Ends the attempts of a worker that finish in the same turn of the event loop together
 * (commitAttempts): one transaction, and one statement for the done jobs' ends, where each alone
 * would read its own. If that transaction fails for anything but a fault of the database, each ends
 * alone (finishAttempt), so one attempt's failing writes never hold back another's end.
 */
export function attemptEnds(ctx: Context, workerId: string): (declaration: TaskDeclaration<TaskName> | undefined, job: ClaimedJob, result: TaskResult) => Promise<void> {
  let waiting: (Finished & { resolve(): void; reject(error: unknown): void })[] = [];
  const flush = async () => {
    const group = waiting;
    waiting = [];
    if (group.length > 1) {
      try {
        await commitAttempts(ctx, workerId, group);
        return group.forEach((a) => a.resolve());
      } catch (error) {
        if (faultOf(error)) return group.forEach((a) => a.reject(error));
      }
    }
    for (const a of group) finishAttempt(ctx, a.declaration, a.job, workerId, a.result).then(a.resolve, a.reject);
  };
  return (declaration, job, result) =>
    new Promise<void>((resolve, reject) => {
      waiting.push({ declaration, job, result, resolve, reject });
      if (waiting.length === 1) setImmediate(() => void flush());
    });
}
