import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as deliveries from '../../domain/webhooks/deliveries.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { IdParams, listOfSchema, MAX, Nullable, Str, UUID } from '../schemas/common.ts';

const EventParams = Type.Object({ id: Str(MAX.id), event_id: Str(MAX.id) });

const EventItem = Type.Object({
  id: Type.String(),
  type: Type.String(),
  created_at: Type.String(),
  status: Type.String({ description: 'pending, attempting (failed, retrying), success or failed (no retry left)' }),
});

const Attempt = Type.Object({
  id: Type.String(),
  http_status_code: Nullable(Type.Number()),
  response: Nullable(Type.String({ description: 'The first KB of the answer' })),
  sent_at: Type.String(),
  error: Nullable(Type.String({ description: 'Why no answer came (Mailroom)' })),
  duration_ms: Type.Number(),
});

const EVENT = `/webhooks/:id${UUID}/events/:event_id${UUID}`;

/** The delivery log of an endpoint: the events sent to it, their attempts, and replay. */
export function webhookEventRoutes(app: App, ctx: Context): void {
  app.get(
    `/webhooks/:id${UUID}/events`,
    { schema: { summary: 'List the events sent to a webhook', params: IdParams, querystring: PageQuery, response: { 200: listOfSchema(EventItem) } } },
    async (request) => listOf(await deliveries.listWebhookEvents(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: false }))),
  );

  app.get(
    EVENT,
    {
      schema: {
        summary: 'Retrieve an event sent to a webhook, with its payload',
        params: EventParams,
        response: {
          200: Type.Object({
            object: Type.Literal('webhook_event'),
            ...EventItem.properties,
            next_attempt_at: Nullable(Type.String()),
            payload: Type.Object({ type: Type.String(), created_at: Type.String(), data: Type.Record(Type.String(), Type.Unknown()) }),
          }),
        },
      },
    },
    async (request) => ({ object: 'webhook_event' as const, ...(await deliveries.getWebhookEvent(ctx, projectOf(request), request.params.id, request.params.event_id)) }),
  );

  app.post(
    `${EVENT}/replay`,
    { schema: { summary: 'Send an event to a webhook again', params: EventParams, response: { 200: Type.Object({ object: Type.Literal('webhook_event'), id: Type.String() }) } } },
    async (request) => {
      await deliveries.replayWebhookEvent(ctx, projectOf(request), request.params.id, request.params.event_id);
      return { object: 'webhook_event' as const, id: request.params.event_id };
    },
  );

  app.get(
    `${EVENT}/attempts`,
    { schema: { summary: 'List the attempts to deliver an event', params: EventParams, querystring: PageQuery, response: { 200: listOfSchema(Attempt) } } },
    async (request) => listOf(await deliveries.listWebhookAttempts(ctx, projectOf(request), request.params.id, request.params.event_id, parsePage(request.query, { everything: false }))),
  );
}
