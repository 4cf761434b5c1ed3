import { runRetention } from '../domain/retention/retention.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One run of retention, which adds the next (domain/retention/retention.ts). */
export const retention: TaskDeclaration<'retention'> = {
  // A failing run tries again with backoff; the job must outlive a long outage, as nothing re-adds it.
  attempts: () => 1000,
  run: runRetention,
};
