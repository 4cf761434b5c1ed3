import type { Tasks } from '../jobs/task.ts';
import { automationStep } from './automation-step.ts';
import { checkDeliverability } from './check-deliverability.ts';
import { deleteProject } from './delete-project.ts';
import { deliverWebhook } from './deliver-webhook.ts';
import { importContacts } from './import-contacts.ts';
import { postTlsReport } from './post-tls-report.ts';
import { retention } from './retention.ts';
import { sendBroadcast } from './send-broadcast.ts';
import { sendEmail } from './send-email.ts';
import { sendTlsReports } from './send-tls-reports.ts';
import { verifyDomain } from './verify-domain.ts';

/** Every task, by the name its jobs carry: a new name in TaskPayloads (jobs/task.ts) must be here. */
export const tasks: Tasks = {
  'send-email': sendEmail,
  'send-broadcast': sendBroadcast,
  'import-contacts': importContacts,
  'verify-domain': verifyDomain,
  'deliver-webhook': deliverWebhook,
  retention,
  'automation-step': automationStep,
  'check-deliverability': checkDeliverability,
  'send-tls-reports': sendTlsReports,
  'post-tls-report': postTlsReport,
  'delete-project': deleteProject,
};
