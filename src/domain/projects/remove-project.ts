import type { Context } from '../../context.ts';
import type { Attempt, TaskResult } from '../../jobs/task.ts';
import { done } from '../../jobs/task.ts';
import { deleteOwnedRows, ownedTables } from '../../store/projects.ts';

/** The `delete-project` task: a deleted project's rows, a table a checkpoint, so a crash resumes where it was. */
export async function removeProjectRows(ctx: Context, attempt: Attempt<'delete-project'>): Promise<TaskResult> {
  const project = attempt.payload.project_id;
  for (const table of ownedTables) {
    if (!(await attempt.checkpoint((tx) => deleteOwnedRows(tx, table, project)))) return done();
  }
  ctx.domains.clear();
  return done();
}
