import { SEND_EMAIL_TASK } from '../domain/emails.ts';
import type { Task } from './runner.ts';
import { sendEmailTask } from './send-email.ts';

/** Every task a worker runs, by the name its jobs carry. */
export const tasks: Record<string, Task> = {
  [SEND_EMAIL_TASK]: sendEmailTask,
};
