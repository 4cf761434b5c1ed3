import type { Db, Tx } from './db.ts';
import type { DashboardSessionTable } from './schema.ts';

export type DashboardSessionRow = DashboardSessionTable;

export async function insertSession(db: Db | Tx, row: DashboardSessionRow): Promise<void> {
  await db.insertInto('dashboard_sessions').values(row).execute();
}

/** The live session whose token hashes to `tokenHash`, while its key exists and has full access; with its key's project. */
export async function findLiveSession(db: Db, tokenHash: string, now: number): Promise<(DashboardSessionRow & { project_id: string }) | undefined> {
  return db
    .selectFrom('dashboard_sessions')
    .innerJoin('api_keys', 'api_keys.id', 'dashboard_sessions.api_key_id')
    .selectAll('dashboard_sessions')
    .select('api_keys.project_id')
    .where('dashboard_sessions.token_hash', '=', tokenHash)
    .where('dashboard_sessions.expires_at', '>', now)
    .where('api_keys.permission', '=', 'full_access')
    .executeTakeFirst();
}

export async function deleteSession(db: Db | Tx, tokenHash: string): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('token_hash', '=', tokenHash).execute();
}

export async function purgeExpiredSessions(db: Db | Tx, now: number): Promise<void> {
  await db.deleteFrom('dashboard_sessions').where('expires_at', '<=', now).execute();
}
