import type { Context } from '../context.ts';
import { enqueue, type Job } from '../domain/jobs.ts';
import { RETENTION_EVERY_MS, RETENTION_JOB_KEY, RETENTION_STEPS } from '../domain/retention/retention.ts';
import { completeJob, renewJobLock } from '../store/jobs.ts';

/**
 * One retention run: each step batch by batch, a transaction each (through the writer, so other
 * writers take turns between them), while this worker still holds the job. The last batch completes
 * the job and adds the next run, in its transaction: there is always exactly one.
 */
export async function retentionTask(ctx: Context, job: Job<'retention'>): Promise<void> {
  const now = ctx.clock.now();
  const steps = Object.entries(RETENTION_STEPS);
  const removed: Record<string, number> = {};
  for (const [index, [name, step]] of steps.entries()) {
    const last = index === steps.length - 1;
    for (let more = true; more; ) {
      // The writer may run this again if its group commit fails: it only writes, and answers.
      const result = await ctx.writer.transaction(async (tx) => {
        // Taken over (its lock timed out) or deleted: the other run goes on alone.
        if (!(await renewJobLock(tx, job.id, job.locked_by!, ctx.clock.now()))) return undefined;
        const batch = await step(ctx, tx, now);
        if (last && !batch.more) {
          await completeJob(tx, job.id);
          await enqueue(ctx, tx, 'retention', {}, { key: RETENTION_JOB_KEY, runAt: ctx.clock.now() + RETENTION_EVERY_MS });
        }
        return batch;
      });
      if (!result) return;
      removed[name] = (removed[name] ?? 0) + result.removed;
      more = result.more;
    }
  }
  ctx.log.info({ removed, retention_days: ctx.config.retentionDays }, 'retention run done');
}
