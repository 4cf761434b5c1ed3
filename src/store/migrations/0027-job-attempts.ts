import type { Kysely } from 'kysely';

// Frozen: never edit a migration that has shipped; add the next one.
// A task declares its attempts (src/jobs/task.ts) and its last attempt ends its job, so a job row no
// longer carries them. Jobs left behind exhausted by the code before were never claimed again: they go.
export async function up(db: Kysely<any>): Promise<void> {
  await db.deleteFrom('jobs').where('locked_by', 'is', null).whereRef('attempts', '>=', 'max_attempts').execute();
  await db.schema.alterTable('jobs').dropColumn('max_attempts').execute();
}
