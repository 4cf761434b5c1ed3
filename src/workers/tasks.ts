import type { Context } from '../context.ts';
import type { Job, TaskName } from '../domain/jobs.ts';
import { automationStepTask } from './automation-step.ts';
import { deliverWebhookTask } from './deliver-webhook.ts';
import { importContactsTask } from './import-contacts.ts';
import { retentionTask } from './retention.ts';
import { sendBroadcastTask } from './send-broadcast.ts';
import { sendEmailTask } from './send-email.ts';
import { verifyDomainTask } from './verify-domain.ts';

/** A task is a plain async function. It completes its job in the transaction that records its outcome. */
export type Task<T extends TaskName> = (ctx: Context, job: Job<T>) => Promise<void>;

/** Every task, by the name its jobs carry: a new name in TaskPayloads (domain/jobs.ts) must be here. */
export type Tasks = { [T in TaskName]: Task<T> };

export const tasks: Tasks = {
  'send-email': sendEmailTask,
  'import-contacts': importContactsTask,
  'verify-domain': verifyDomainTask,
  'send-broadcast': sendBroadcastTask,
  'deliver-webhook': deliverWebhookTask,
  retention: retentionTask,
  'automation-step': automationStepTask,
};
