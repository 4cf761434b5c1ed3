import { postReport } from '../domain/tls-reports/post-report.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** A TLS report posted to a recipient domain's https: address (domain/tls-reports/post-report.ts). */
export const postTlsReport: TaskDeclaration<'post-tls-report'> = {
  // 12 attempts at exp(min(n, 10)) s span about 20 hours: a day's report is worth little after the next.
  attempts: () => 12,
  run: postReport,
};
