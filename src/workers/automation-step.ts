import type { Context } from '../context.ts';
import { runStep } from '../domain/automations/run-steps.ts';
import type { Job } from '../domain/jobs.ts';

/** Runs one step of an automation's run (domain/automations/run-steps.ts), in one transaction. */
export async function automationStepTask(ctx: Context, job: Job<'automation-step'>): Promise<void> {
  await runStep(ctx, job);
}
