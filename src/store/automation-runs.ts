import type { Db, Tx } from './db.ts';
import { isPostgres } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { AutomationRunStepTable, AutomationRunTable } from './schema.ts';

export type RunRow = AutomationRunTable;
export type RunStepRow = AutomationRunStepTable;

/** The states of a step that has not ended: due, or holding its run. */
export const OPEN_STEP_STATES = ['pending', 'waiting'];

export async function insertRun(tx: Tx, run: RunRow): Promise<void> {
  await tx.insertInto('automation_runs').values(run).execute();
}

export async function insertSteps(tx: Tx, steps: RunStepRow[]): Promise<void> {
  if (steps.length > 0) await tx.insertInto('automation_run_steps').values(steps).execute();
}

/** The automation's run with this id (a run is its automation's project's). */
export async function findRun(db: Db | Tx, automationId: string, id: string): Promise<RunRow | undefined> {
  return db.selectFrom('automation_runs').selectAll().where('id', '=', id).where('automation_id', '=', automationId).executeTakeFirst();
}

/** The run, its row locked until the transaction ends (PostgreSQL; SQLite has one writer), so its steps end one at a time. */
export async function lockRun(tx: Tx, id: string): Promise<RunRow | undefined> {
  const query = tx.selectFrom('automation_runs').selectAll().where('id', '=', id);
  return (isPostgres(tx) ? query.forUpdate() : query).executeTakeFirst();
}

/** A step with its run and the run's project (its automation's), in one read: what a step's job starts from. */
export async function findStepWithRun(db: Db | Tx, stepId: string): Promise<{ step: RunStepRow; run: RunRow; project: string } | undefined> {
  const row = await db
    .selectFrom('automation_run_steps as s')
    .innerJoin('automation_runs as r', 'r.id', 's.run_id')
    .innerJoin('automations as a', 'a.id', 'r.automation_id')
    .selectAll('s')
    .select([
      'a.project_id',
      'r.automation_id',
      'r.version_id',
      'r.contact_id as run_contact_id',
      'r.email',
      'r.status as run_status',
      'r.event',
      'r.started_at as run_started_at',
      'r.completed_at as run_completed_at',
      'r.created_at as run_created_at',
    ])
    .where('s.id', '=', stepId)
    .executeTakeFirst();
  if (!row) return undefined;
  const { project_id, automation_id, version_id, run_contact_id, email, run_status, event, run_started_at, run_completed_at, run_created_at, ...step } = row;
  const run: RunRow = {
    id: step.run_id,
    automation_id,
    version_id,
    contact_id: run_contact_id,
    email,
    status: run_status,
    event,
    started_at: run_started_at,
    completed_at: run_completed_at,
    created_at: run_created_at,
  };
  return { step, run, project: project_id };
}

/**
 * Records an open step's outcome: false when it has ended already (its wait ended by an event and by
 * its timeout at once, say), and then nothing of it must be written.
 */
export async function finishStep(tx: Tx, id: string, outcome: Pick<RunStepRow, 'status' | 'output' | 'error' | 'completed_at'> & { started_at: string }): Promise<boolean> {
  const result = await tx
    .updateTable('automation_run_steps')
    .set((eb) => ({ ...outcome, wait_event: null, started_at: eb.fn.coalesce('started_at', eb.val(outcome.started_at)) }))
    .where('id', '=', id)
    .where('status', 'in', OPEN_STEP_STATES)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Completes a run that has no open step left; one statement, where a count then an update took two. */
export async function completeRunIfDone(tx: Tx, id: string, at: string): Promise<void> {
  await tx
    .updateTable('automation_runs')
    .set({ status: 'completed', completed_at: at })
    .where('id', '=', id)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('automation_run_steps').select('id').where('run_id', '=', id).where('status', 'in', OPEN_STEP_STATES))),
    )
    .execute();
}

export async function endRun(tx: Tx, id: string, status: string, at: string): Promise<void> {
  await tx.updateTable('automation_runs').set({ status, completed_at: at }).where('id', '=', id).execute();
}

/** The steps waiting for an event of this name, for this contact, oldest first (so that two events lock their runs in one order). */
export async function findWaitingSteps(db: Db | Tx, eventName: string, contactId: string): Promise<RunStepRow[]> {
  return db.selectFrom('automation_run_steps').selectAll().where('wait_event', '=', eventName).where('contact_id', '=', contactId).orderBy('id').execute();
}

/** A run's open steps. */
export async function findOpenStepsOfRun(tx: Tx, runId: string): Promise<Pick<RunStepRow, 'id'>[]> {
  return tx.selectFrom('automation_run_steps').select('id').where('run_id', '=', runId).where('status', 'in', OPEN_STEP_STATES).execute();
}

/** Cancels open steps, 500 at a time (bounded statements however many runs an automation has). */
export async function cancelSteps(tx: Tx, ids: string[], at: string): Promise<void> {
  for (let i = 0; i < ids.length; i += 500) {
    const slice = ids.slice(i, i + 500);
    await tx.updateTable('automation_run_steps').set({ status: 'cancelled', completed_at: at, wait_event: null }).where('id', 'in', slice).where('status', 'in', OPEN_STEP_STATES).execute();
  }
}

/** The open steps of an automation's running runs. */
export async function findOpenSteps(db: Db | Tx, automationId: string): Promise<Pick<RunStepRow, 'id'>[]> {
  return db
    .selectFrom('automation_run_steps')
    .innerJoin('automation_runs', 'automation_runs.id', 'automation_run_steps.run_id')
    .select('automation_run_steps.id')
    .where('automation_runs.automation_id', '=', automationId)
    .where('automation_runs.status', '=', 'running')
    .where('automation_run_steps.status', 'in', OPEN_STEP_STATES)
    .execute();
}

/** Cancels an automation's running runs (their open steps are cancelled apart); returns how many. */
export async function cancelRuns(tx: Tx, automationId: string, at: string): Promise<number> {
  const result = await tx
    .updateTable('automation_runs')
    .set({ status: 'cancelled', completed_at: at })
    .where('automation_id', '=', automationId)
    .where('status', '=', 'running')
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

export async function listRuns(db: Db, automationId: string, page: PageRequest, statuses: string[] | undefined) {
  let query = db
    .selectFrom('automation_runs')
    .select(['id', 'status', 'started_at', 'completed_at', 'created_at', 'contact_id', 'email'])
    .where('automation_id', '=', automationId);
  if (statuses !== undefined) query = query.where('status', 'in', statuses);
  return selectPage(query, 'id', page);
}

/** A run's steps in the order they were reached. */
/** A page of a run's steps, newest first. */
export async function pageRunSteps(db: Db, runId: string, page: PageRequest) {
  return selectPage(db.selectFrom('automation_run_steps').selectAll().where('run_id', '=', runId), 'id', page);
}

export async function findRunStep(db: Db, runId: string, id: string): Promise<RunStepRow | undefined> {
  return db.selectFrom('automation_run_steps').selectAll().where('run_id', '=', runId).where('id', '=', id).executeTakeFirst();
}

export async function listRunSteps(db: Db, runId: string): Promise<RunStepRow[]> {
  return db.selectFrom('automation_run_steps').selectAll().where('run_id', '=', runId).orderBy('id').execute();
}
