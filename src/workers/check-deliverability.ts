import { runDailyChecks } from '../domain/deliverability/daily-checks.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One run of the daily deliverability checks, which adds the next (domain/deliverability/daily-checks.ts). */
export const checkDeliverability: TaskDeclaration<'check-deliverability'> = {
  // A failing run tries again with backoff; the job must outlive a long outage (a worker's start re-adds it only when missing).
  attempts: () => 1000,
  run: runDailyChecks,
};
