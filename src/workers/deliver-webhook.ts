import { deliverWebhook as deliver, WEBHOOK_ATTEMPTS, webhookRetryMs } from '../domain/webhooks/deliver-webhook.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One post of a webhook message to its endpoint (domain/webhooks/deliver-webhook.ts). */
export const deliverWebhook: TaskDeclaration<'deliver-webhook'> = {
  // Resend's schedule: eight attempts over about 27 hours.
  attempts: () => WEBHOOK_ATTEMPTS,
  backoffMs: webhookRetryMs,
  run: deliver,
};
