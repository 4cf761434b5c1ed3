import { SEND_BROADCAST_TASK } from '../domain/broadcasts.ts';
import { IMPORT_CONTACTS_TASK } from '../domain/contact-imports.ts';
import { VERIFY_DOMAIN_TASK } from '../domain/domain-verification.ts';
import { SEND_EMAIL_TASK } from '../domain/emails.ts';
import { importContactsTask } from './import-contacts.ts';
import type { Task } from './runner.ts';
import { sendBroadcastTask } from './send-broadcast.ts';
import { sendEmailTask } from './send-email.ts';
import { verifyDomainTask } from './verify-domain.ts';

/** Every task a worker runs, by the name its jobs carry. */
export const tasks: Record<string, Task> = {
  [SEND_EMAIL_TASK]: sendEmailTask,
  [IMPORT_CONTACTS_TASK]: importContactsTask,
  [VERIFY_DOMAIN_TASK]: verifyDomainTask,
  [SEND_BROADCAST_TASK]: sendBroadcastTask,
};
