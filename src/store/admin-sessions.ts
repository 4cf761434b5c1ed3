import type { Db, Tx } from './db.ts';
import type { AdminSessionTable } from './schema.ts';

export type AdminSessionRow = AdminSessionTable;

export async function insertAdminSession(db: Db | Tx, row: AdminSessionRow): Promise<void> {
  await db.insertInto('admin_sessions').values(row).execute();
}

/**
 * The live admin session whose token hashes to `tokenHash`, with its project's name: signed in with an
 * admin key that still is one, MAILROOM_ADMIN_KEY (hashing to `configuredKeyHash`) or a row of admin_keys.
 */
export async function findLiveAdminSession(db: Db, tokenHash: string, configuredKeyHash: string | undefined, now: number) {
  return db
    .selectFrom('admin_sessions')
    .leftJoin('projects', 'projects.id', 'admin_sessions.project_id')
    .selectAll('admin_sessions')
    .select('projects.name as project_name')
    .where('admin_sessions.token_hash', '=', tokenHash)
    .where('admin_sessions.expires_at', '>', now)
    .where((eb) =>
      eb.or([
        ...(configuredKeyHash === undefined ? [] : [eb('admin_sessions.admin_key_hash', '=', configuredKeyHash)]),
        eb.exists(eb.selectFrom('admin_keys').select('admin_keys.id').whereRef('admin_keys.token_hash', '=', 'admin_sessions.admin_key_hash')),
      ]),
    )
    .executeTakeFirst();
}

/** Points the session at `projectId` (null: none), if that project exists; false when it does not. */
export async function setAdminSessionProject(tx: Tx, id: string, projectId: string | null): Promise<boolean> {
  if (projectId !== null && !(await tx.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst())) return false;
  await tx.updateTable('admin_sessions').set({ project_id: projectId }).where('id', '=', id).execute();
  return true;
}

export async function deleteAdminSession(db: Db | Tx, tokenHash: string): Promise<void> {
  await db.deleteFrom('admin_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function purgeExpiredAdminSessions(db: Db | Tx, now: number): Promise<void> {
  await db.deleteFrom('admin_sessions').where('expires_at', '<=', now).execute();
}
