import type { Db, Tx } from './db.ts';
import { isPostgres } from './db.ts';
import type { JobTable } from './schema.ts';
import { markJobsAdded } from './writer.ts';

// Every statement on the jobs table; only the job seam (src/jobs/) calls them.

export type JobRow = JobTable;

/** A claimed job, its payload parsed (what it holds is its task's business). */
export interface ClaimedJob extends Omit<JobRow, 'payload'> {
  payload: unknown;
}

/** Adds jobs in the caller's transaction, which wakes the workers once it commits. */
export async function addJobs(tx: Tx, jobs: JobRow[]): Promise<void> {
  if (jobs.length === 0) return;
  await tx.insertInto('jobs').values(jobs).execute();
  markJobsAdded(tx);
}

/**
 * Claims up to `limit` due jobs in one statement: those no worker holds; those held by another worker
 * with no heartbeat since `silentSince` (or no row at all), which died holding them; and, as a backstop,
 * those locked before `lockedBefore` by anyone, whose live worker no longer runs them (a task that hung,
 * a claim whose answer was lost, a failed reschedule). Finding a holder dead is a lookup in the small
 * workers table (by primary key on SQLite, hashed once per claim on PostgreSQL), for held jobs only. A
 * worker never takes its own jobs over on the heartbeat rule: they are running in it, whatever its row
 * says. On PostgreSQL, FOR UPDATE SKIP LOCKED lets many workers claim at once without waiting on, or
 * taking, each other's rows; SQLite has one writer at a time, so the statement is atomic there as it
 * stands. Attempts count at claim time, so a job that crashes its worker still uses up its attempts; a
 * job's last attempt ends it (src/jobs/runner.ts), so none waits here exhausted.
 */
export async function claimJobs(
  db: Db,
  options: { workerId: string; now: number; limit: number; silentSince: number; lockedBefore: number },
): Promise<ClaimedJob[]> {
  const rows = await db
    .updateTable('jobs')
    .set((eb) => ({ locked_by: options.workerId, locked_at: options.now, attempts: eb('attempts', '+', 1) }))
    .where('id', 'in', (eb) => {
      const due = eb
        .selectFrom('jobs')
        .select('id')
        .where('run_at', '<=', options.now)
        .where((w) =>
          w.or([
            w('locked_by', 'is', null),
            w('locked_at', '<', options.lockedBefore),
            w.and([
              w('locked_by', '!=', options.workerId),
              w.not(
                w.exists(
                  w
                    .selectFrom('workers')
                    .select('workers.id')
                    .whereRef('workers.id', '=', 'jobs.locked_by')
                    .where('workers.heartbeat_at', '>=', options.silentSince),
                ),
              ),
            ]),
          ]),
        )
        .orderBy('run_at')
        .orderBy('id') // oldest first among jobs due at the same time
        .limit(options.limit);
      return isPostgres(db) ? due.forUpdate().skipLocked() : due;
    })
    .returningAll()
    .execute();
  return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as unknown }));
}

/**
 * Hands back the jobs of `ids` that `workerId` still holds, as if it had never claimed them: unlocked,
 * due when they were, with the attempt given back (a worker stopping is not the job's failure). Returns
 * how many it released.
 */
export async function releaseJobs(db: Db | Tx, workerId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const result = await db
    .updateTable('jobs')
    .set((eb) => ({ locked_by: null, locked_at: null, attempts: eb('attempts', '-', 1) }))
    .where('id', 'in', ids)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Hands back the jobs `workerId` holds but does not run (`running`), as releaseJobs does: after the
 * database was away, those whose end could not be written, or whose claim committed without its answer
 * reaching the worker. The outage is not the job's failure: the attempt is given back.
 */
export async function releaseJobsNotRunning(db: Db, workerId: string, running: string[]): Promise<number> {
  let query = db
    .updateTable('jobs')
    .set((eb) => ({ locked_by: null, locked_at: null, attempts: eb('attempts', '-', 1) }))
    .where('locked_by', '=', workerId);
  if (running.length > 0) query = query.where('id', 'not in', running);
  const result = await query.executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/**
 * Deletes (done, or failed for good) each job of `ids` that `workerId` still holds, in one statement;
 * the others were handed back or taken over, and are left alone. First in its transaction: resolves
 * with the ids it deleted, whose outcomes are then recorded.
 */
export async function completeHeldJobs(tx: Tx, ids: string[], workerId: string): Promise<Set<string>> {
  const rows = await tx.deleteFrom('jobs').where('id', 'in', ids).where('locked_by', '=', workerId).returning('id').execute();
  return new Set(rows.map((row) => row.id));
}

/** Unlocks a job that `workerId` still holds to run again at `runAt`, with its error; false, and nothing done, once it was handed back or taken over. */
export async function retryHeldJob(tx: Db | Tx, id: string, workerId: string, runAt: number, error: string): Promise<boolean> {
  const result = await tx
    .updateTable('jobs')
    .set({ run_at: runAt, locked_by: null, locked_at: null, last_error: error.slice(0, 2000) })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Unlocks a job that `workerId` still holds to run again at `runAt`, its attempt given back: it waited
 * for our own throttle, not for a failure. False, and nothing done, once it was handed back or taken over.
 */
export async function postponeHeldJob(tx: Db | Tx, id: string, workerId: string, runAt: number): Promise<boolean> {
  const result = await tx
    .updateTable('jobs')
    .set((eb) => ({ run_at: runAt, locked_by: null, locked_at: null, attempts: eb('attempts', '-', 1) }))
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Moves a job that no worker holds yet; false when it is running or gone. */
export async function moveJob(tx: Tx, key: string, runAt: number): Promise<boolean> {
  const result = await tx
    .updateTable('jobs')
    .set({ run_at: runAt })
    .where('key', '=', key)
    .where('locked_at', 'is', null)
    .executeTakeFirst();
  // Moved earlier, it may be due now.
  if (result.numUpdatedRows > 0n) markJobsAdded(tx);
  return result.numUpdatedRows > 0n;
}

/**
 * Adds `job`, replacing a waiting job with the same key; a job with that key that a worker holds
 * right now is left alone (it is doing the work already).
 */
export async function replaceJob(tx: Tx, job: JobRow): Promise<void> {
  await tx.deleteFrom('jobs').where('key', '=', job.key).where('locked_at', 'is', null).execute();
  await tx.insertInto('jobs').values(job).onConflict((oc) => oc.column('key').doNothing()).execute();
  markJobsAdded(tx);
}

/** Adds `job` unless a job with its key exists; false when one does. */
export async function addJobUnlessKeyed(tx: Tx, job: JobRow): Promise<boolean> {
  const result = await tx.insertInto('jobs').values(job).onConflict((oc) => oc.column('key').doNothing()).executeTakeFirst();
  const added = Number(result.numInsertedOrUpdatedRows ?? 0n) > 0;
  if (added) markJobsAdded(tx);
  return added;
}

/** Deletes a job that no worker holds yet; false when it is running or gone. */
export async function cancelJob(tx: Tx, key: string): Promise<boolean> {
  const result = await tx.deleteFrom('jobs').where('key', '=', key).where('locked_at', 'is', null).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/**
 * Deletes the jobs of `keys` even while a worker holds one: that worker's next checkpoint or ending
 * finds it gone and writes nothing (a canceled broadcast's fan-out stops).
 */
export async function deleteJobs(tx: Tx, keys: string[]): Promise<void> {
  for (let i = 0; i < keys.length; i += 500) await tx.deleteFrom('jobs').where('key', 'in', keys.slice(i, i + 500)).execute();
}

/**
 * Renews the lock of a long job that its worker still holds, in the job's own transaction, so that the
 * lock timeout does not take it over while it runs; false when another worker has taken it over or the
 * job was deleted meanwhile. The write keeps the row locked until that transaction ends, so no claim
 * takes the job between this check and the commit.
 */
export async function renewJobLock(tx: Db | Tx, id: string, workerId: string, now: number): Promise<boolean> {
  const result = await tx
    .updateTable('jobs')
    .set({ locked_at: now })
    .where('id', '=', id)
    .where('locked_by', '=', workerId)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Per task, the jobs due at `now` that no worker holds, and the due time of the oldest (the queue gauges). */
export async function dueJobsByTask(db: Db, now: number): Promise<{ task: string; due: number; oldest_run_at: number }[]> {
  const rows = await db
    .selectFrom('jobs')
    .select((eb) => ['task', eb.fn.countAll<number | string>().as('due'), eb.fn.min('run_at').as('oldest_run_at')])
    .where('run_at', '<=', now)
    .where('locked_by', 'is', null)
    .groupBy('task')
    .execute();
  return rows.map((row) => ({ task: row.task, due: Number(row.due), oldest_run_at: Number(row.oldest_run_at) }));
}

/** When the next job not yet due falls due (epoch ms); undefined when none waits. */
export async function nextDueAt(db: Db, now: number): Promise<number | undefined> {
  const row = await db.selectFrom('jobs').select((eb) => eb.fn.min('run_at').as('next')).where('run_at', '>', now).executeTakeFirst();
  return row?.next === null || row?.next === undefined ? undefined : Number(row.next);
}
