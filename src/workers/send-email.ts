import { deliverEmail } from '../domain/emails/deliver-email.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** Delivers one email to its pending recipients (domain/emails/deliver-email.ts). */
export const sendEmail: TaskDeclaration<'send-email'> = {
  // Each attempt tries the recipients a server deferred again: WORKER_MAX_ATTEMPTS, about 71 hours.
  attempts: (config) => config.worker.maxAttempts,
  run: deliverEmail,
};
