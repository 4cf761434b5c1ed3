import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as webhooks from '../../domain/webhooks/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/event-types.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { deleted, IdParams, listOfSchema, MAX, Nullable, objectId, Str, UUID } from '../schemas/common.ts';

const Endpoint = Str(MAX.url, 'An absolute http(s) URL; loopback and private addresses only with MAILROOM_ALLOW_PRIVATE_WEBHOOK_URLS');
const Events = Type.Array(Str(MAX.short), { maxItems: 100, description: `Event types, at least one: ${WEBHOOK_EVENT_TYPES.join(', ')}` });

const CreateBody = Type.Object({ endpoint: Endpoint, events: Events });

const UpdateBody = Type.Object({
  endpoint: Type.Optional(Endpoint),
  events: Type.Optional(Events),
  status: Type.Optional(Str(MAX.short, '"enabled" or "disabled"; enabling clears the failure record')),
});

const WebhookItem = Type.Object({
  object: Type.Literal('webhook'),
  id: Type.String(),
  endpoint: Type.String(),
  created_at: Type.String(),
  status: Type.String(),
  events: Type.Array(Type.String()),
  signing_secret: Type.String(),
});

const Webhook = Type.Object({
  object: Type.Literal('webhook'),
  id: Type.String(),
  created_at: Type.String(),
  status: Type.String(),
  endpoint: Type.String(),
  events: Type.Array(Type.String()),
  signing_secret: Type.String(),
  disabled_reason: Type.Optional(Nullable(Type.String({ description: "Mailroom's addition, when disabled: why (null when disabled through the API)" }))),
});

const WithSecret = Type.Object({ object: Type.Literal('webhook'), id: Type.String(), signing_secret: Type.String() });

export function webhookRoutes(app: App, ctx: Context): void {
  app.post(
    '/webhooks',
    { schema: { summary: 'Create a webhook endpoint; the answer carries its signing secret', body: CreateBody, response: { 201: WithSecret } } },
    async (request, reply) => reply.status(201).send({ object: 'webhook' as const, ...(await webhooks.createWebhook(ctx, projectOf(request), request.body)) }),
  );

  app.get(
    '/webhooks',
    {
      schema: {
        summary: 'List webhook endpoints with their signing secrets (always paginated, 20 by default)',
        querystring: PageQuery,
        response: { 200: listOfSchema(WebhookItem) },
      },
    },
    async (request) => listOf(await webhooks.listWebhooks(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/webhooks/:id${UUID}`,
    { schema: { summary: 'Retrieve a webhook endpoint with its signing secret', params: IdParams, response: { 200: Webhook } } },
    async (request) => ({ object: 'webhook' as const, ...(await webhooks.getWebhook(ctx, projectOf(request), request.params.id)) }),
  );

  app.patch(
    `/webhooks/:id${UUID}`,
    {
      schema: {
        summary: 'Update a webhook endpoint: its URL, its event types, enabled or disabled',
        params: IdParams,
        body: UpdateBody,
        response: { 200: objectId('webhook') },
      },
    },
    async (request) => {
      await webhooks.updateWebhook(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'webhook' as const, id: request.params.id };
    },
  );

  app.delete(
    `/webhooks/:id${UUID}`,
    { schema: { summary: 'Delete a webhook endpoint and its deliveries', params: IdParams, response: { 200: deleted('webhook') } } },
    async (request) => {
      await webhooks.deleteWebhook(ctx, projectOf(request), request.params.id);
      return { object: 'webhook' as const, id: request.params.id, deleted: true };
    },
  );

  app.post(
    `/webhooks/:id${UUID}/signing-secret/rotate`,
    {
      schema: {
        summary: 'Replace a webhook endpoint’s signing secret; the old one stops at once',
        params: IdParams,
        response: { 200: WithSecret },
      },
    },
    async (request) => ({ object: 'webhook' as const, ...(await webhooks.rotateSigningSecret(ctx, projectOf(request), request.params.id)) }),
  );
}
