import { runImport } from '../domain/contacts/import-run.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** A contact import's run through its CSV (domain/contacts/import-run.ts). */
export const importContacts: TaskDeclaration<'import-contacts'> = {
  // A CSV that cannot be read fails at once; the rest is the database's trouble, worth retrying.
  attempts: (config) => config.worker.maxAttempts,
  run: runImport,
};
