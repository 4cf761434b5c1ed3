import type { Db, Tx } from './db.ts';
import { selectPage, type PageRequest } from './paginate.ts';

// The API's request logs (domain/api-logs/). Rows are written by the log buffer through writer.insert
// (store/insert-rows.ts), many at a time; these are the reads and retention's deletes.

const SUMMARY = ['id', 'created_at', 'endpoint', 'method', 'response_status', 'user_agent'] as const;

/** A page of the project's logs as the list shows them (no bodies), newest first. */
export async function listApiLogs(db: Db, project: string, page: PageRequest) {
  return selectPage(db.selectFrom('api_logs').select(SUMMARY).where('project_id', '=', project), 'id', page);
}

/** The project's log of that id; another project's is none. */
export async function findApiLog(db: Db, project: string, id: string) {
  return db.selectFrom('api_logs').selectAll().where('id', '=', id).where('project_id', '=', project).executeTakeFirst();
}

/** Deletes up to `limit` logs whose id is below `beforeId` (idFloor of a time), oldest first; returns how many. */
export async function deleteApiLogs(tx: Tx, beforeId: string, limit: number): Promise<number> {
  const result = await tx
    .deleteFrom('api_logs')
    .where('id', 'in', (eb) => eb.selectFrom('api_logs').select('id').where('id', '<', beforeId).orderBy('id').limit(limit))
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
