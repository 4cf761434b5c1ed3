import { runStep } from '../domain/automations/run-steps.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** One step of an automation's run, in one transaction (domain/automations/run-steps.ts). */
export const automationStep: TaskDeclaration<'automation-step'> = {
  // A step's work is one transaction: what fails is the database, worth retrying for a while.
  attempts: (config) => config.worker.maxAttempts,
  run: runStep,
};
