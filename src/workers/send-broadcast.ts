import { fanOut } from '../domain/broadcasts/fan-out.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** A broadcast's fan-out into an email per recipient (domain/broadcasts/fan-out.ts). */
export const sendBroadcast: TaskDeclaration<'send-broadcast'> = {
  // What fails here is the database: worth retrying for as long as an email's delivery.
  attempts: (config) => config.worker.maxAttempts,
  run: fanOut,
};
