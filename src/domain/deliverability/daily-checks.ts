import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { findDomainsDue } from '../../store/domain-deliverability.ts';
import { findDomainById } from '../../store/domains.ts';
import { enqueue, ensure } from '../../jobs/enqueue.ts';
import { done, type Attempt, type TaskResult } from '../../jobs/task.ts';
import { recordChecks, runChecks } from './deliverability.ts';

// The daily checks: one `check-deliverability` job, which every worker adds at start if it is missing,
// runs every hour and checks each domain whose last check is a day old (or that was never checked), so
// domains are checked daily, spread over the day, and a run cut short resumes where it stopped.

export const DELIVERABILITY_JOB_KEY = 'check-deliverability';
/** How often the job looks for domains due. */
export const DELIVERABILITY_EVERY_MS = 3600_000;
/** A domain is checked again once its last check is this old. */
export const RECHECK_MS = 24 * 3600_000;
const BATCH = 50;

/** Adds the job unless it exists (a worker's start): due now, then it schedules itself. */
export async function scheduleDeliverabilityChecks(ctx: Context): Promise<void> {
  await ctx.writer.transaction((tx) => ensure(ctx, tx, 'check-deliverability', {}, { key: DELIVERABILITY_JOB_KEY }));
}

/** The `check-deliverability` task, one run: each domain due, checked and kept with a checkpoint, then the next run. */
export async function runDailyChecks(ctx: Context, attempt: Attempt<'check-deliverability'>): Promise<TaskResult> {
  const before = toTimestamp(ctx.clock.now() - RECHECK_MS);
  let after = '';
  for (;;) {
    const ids = await findDomainsDue(ctx.db, { before, after, limit: BATCH });
    for (const id of ids) {
      const domain = await findDomainById(ctx.db, id);
      if (!domain) continue;
      const result = await runChecks(ctx, domain, ctx.clock.now());
      // Taken over (its lock timed out) or deleted: the other run goes on alone.
      if (!(await attempt.checkpoint(async (tx) => void (await recordChecks(ctx, tx, result))))) return done();
    }
    if (ids.length < BATCH) break;
    after = ids.at(-1)!;
  }
  return done((tx) => enqueue(ctx, tx, 'check-deliverability', {}, { key: DELIVERABILITY_JOB_KEY, runAt: ctx.clock.now() + DELIVERABILITY_EVERY_MS }));
}
