import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as apiKeys from '../../domain/api-keys/api-keys.ts';
import { projectOf } from '../auth.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { deleted, IdParams, listOfSchema, MAX, objectId, Str, UUID } from '../schemas/common.ts';

const ApiKeyListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  created_at: Type.String(),
  last_used_at: Type.Union([Type.String(), Type.Null()]),
});

/** Mailroom's extension: a key's own request rate (docs/operations.md#rate-limits). */
const RateLimit = Type.Union([Type.Integer(), Type.Null()], {
  description: 'a whole number of requests per second, or null for the default (MAILROOM_RATE_LIMIT); a Mailroom extension',
});

export function apiKeyRoutes(app: App, ctx: Context): void {
  app.post(
    '/api-keys',
    {
      schema: {
        summary: 'Create an API key; the token is shown only here',
        body: Type.Object({
          name: Str(MAX.short),
          permission: Type.Optional(Str(MAX.short, '"full_access" (default) or "sending_access"')),
          domain_id: Type.Optional(Str(MAX.id, 'Restricts a sending key to one domain')),
          rate_limit: Type.Optional(RateLimit),
        }),
        response: { 201: Type.Object({ object: Type.Literal('api_key'), id: Type.String(), token: Type.String() }) },
      },
    },
    async (request, reply) => {
      const key = await apiKeys.createApiKey(ctx, projectOf(request), request.body);
      return reply.status(201).send({ object: 'api_key' as const, ...key });
    },
  );

  app.get(
    '/api-keys',
    { schema: { summary: 'List API keys', querystring: PageQuery, response: { 200: listOfSchema(ApiKeyListItem) } } },
    async (request, reply) => replyList(reply, await apiKeys.listApiKeys(ctx, projectOf(request), parsePage(request.query, { everything: true }))),
  );

  app.patch(
    `/api-keys/:id${UUID}`,
    {
      schema: {
        summary: 'Rename an API key, or set its rate limit',
        params: IdParams,
        body: Type.Object({ name: Type.Optional(Str(MAX.short)), rate_limit: Type.Optional(RateLimit) }),
        response: { 200: objectId('api_key') },
      },
    },
    async (request) => {
      await apiKeys.updateApiKey(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'api_key' as const, id: request.params.id };
    },
  );

  app.delete(
    `/api-keys/:id${UUID}`,
    { schema: { summary: 'Delete an API key', params: IdParams, response: { 200: deleted('api_key') } } },
    async (request) => {
      await apiKeys.deleteApiKey(ctx, projectOf(request), request.params.id);
      return { object: 'api_key' as const, id: request.params.id, deleted: true };
    },
  );
}
