import { removeProjectRows } from '../domain/projects/remove-project.ts';
import type { TaskDeclaration } from '../jobs/task.ts';

/** Everything a deleted project owned (domain/projects/remove-project.ts). */
export const deleteProject: TaskDeclaration<'delete-project'> = {
  // Each table's deletion is one statement, checkpointed: a few tries cover a database's bad minute.
  attempts: () => 10,
  run: removeProjectRows,
};
