import { sendTlsReports as run } from '../domain/tls-reports/send-reports.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One run of the daily TLS reports, which adds the next (domain/tls-reports/send-reports.ts). */
export const sendTlsReports: TaskDeclaration<'send-tls-reports'> = {
  // A failing run tries again with backoff; the job must outlive a long outage (a worker's start re-adds it only when missing).
  attempts: () => 1000,
  run,
};
