import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { getLog, listLogs } from '../../domain/api-logs/api-logs.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { IdParams, listOfSchema, Nullable, UUID } from '../schemas/common.ts';

const LogSummary = Type.Object({
  id: Type.String(),
  created_at: Type.String(),
  endpoint: Type.String({ description: 'The path as called, without the query string' }),
  method: Type.String(),
  response_status: Type.Integer(),
  user_agent: Nullable(Type.String()),
});

const Body = Type.Unknown({ description: 'JSON or null; secrets replaced by "[redacted]", up to MAILROOM_LOG_BODY_BYTES' });

const Log = Type.Object({
  object: Type.Literal('log'),
  ...LogSummary.properties,
  request_body: Body,
  response_body: Body,
  api_key_id: Nullable(Type.String({ description: 'The key that made the request (Mailroom)' })),
  duration_ms: Type.Integer({ description: 'Time to answer (Mailroom)' }),
});

/** The API's request logs. Reading them is not itself recorded: each read would add a copy of what it read. */
export function logRoutes(app: App, ctx: Context): void {
  app.get(
    '/logs',
    {
      config: { apiLog: false },
      schema: { summary: 'List the API requests, newest first', querystring: PageQuery, response: { 200: listOfSchema(LogSummary) } },
    },
    async (request) => listOf(await listLogs(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/logs/:id${UUID}`,
    { config: { apiLog: false }, schema: { summary: 'Retrieve an API request with its bodies', params: IdParams, response: { 200: Log } } },
    async (request) => ({ object: 'log' as const, ...(await getLog(ctx, projectOf(request), request.params.id)) }),
  );
}
