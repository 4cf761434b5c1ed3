// GET /logs and GET /logs/:id: the recorded requests, newest first, and one with its bodies.
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { findApiLog, listApiLogs } from '../../store/api-logs.ts';
import { parsed } from '../../store/json.ts';
import type { PageRequest } from '../../store/paginate.ts';

export const listLogs = (ctx: Context, project: string, page: PageRequest) => listApiLogs(ctx.db, project, page);

/** The project's log with its bodies as JSON values (null when none was kept); another project's is not found. */
export async function getLog(ctx: Context, project: string, id: string) {
  const row = await findApiLog(ctx.db, project, id);
  if (!row) throw notFound('Log');
  return { ...row, request_body: parsed(row.request_body), response_body: parsed(row.response_body) };
}
