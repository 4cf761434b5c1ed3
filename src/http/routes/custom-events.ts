import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as events from '../../domain/automations/custom-events.ts';
import { sendEvent } from '../../domain/automations/runs.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { deleted, listOfSchema, MAX, Nullable, objectId, Str } from '../schemas/common.ts';

// Custom events (`/events`): named triggers of automations. Not the webhook events of `/webhooks/:id/events`.

/** A flat map of payload keys to "string", "number", "boolean" or "date". */
const EventSchema = Type.Record(Type.String(), Str(MAX.short), { maxProperties: 100, description: 'field name -> "string" | "number" | "boolean" | "date"' });

const EventItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  schema: Nullable(Type.Record(Type.String(), Type.String())),
  created_at: Type.String(),
  updated_at: Nullable(Type.String()),
});

const IdentifierParams = Type.Object({ identifier: Str(MAX.short, "The event's id or name") });

export function customEventRoutes(app: App, ctx: Context): void {
  app.post(
    '/events',
    {
      schema: {
        summary: 'Create a custom event',
        body: Type.Object({ name: Type.Optional(Str(MAX.short)), schema: Type.Optional(Nullable(EventSchema)) }),
        response: { 201: objectId('event') },
      },
    },
    async (request, reply) => reply.status(201).send({ object: 'event' as const, ...(await events.createEvent(ctx, projectOf(request), request.body)) }),
  );

  app.post(
    '/events/send',
    {
      schema: {
        summary: "Send an event for a contact: starts the automations it triggers and ends the waits for it (202 once committed)",
        body: Type.Object({
          event: Type.Optional(Str(MAX.short)),
          contact_id: Type.Optional(Nullable(Str(MAX.id))),
          email: Type.Optional(Nullable(Str(MAX.line))),
          payload: Type.Optional(Nullable(Type.Record(Type.String(), Type.Unknown(), { maxProperties: 100 }))),
        }),
        response: { 202: Type.Object({ object: Type.Literal('event'), event: Type.String() }) },
      },
    },
    async (request, reply) => reply.status(202).send(await sendEvent(ctx, projectOf(request), request.body)),
  );

  app.get(
    '/events',
    { schema: { summary: 'List custom events', querystring: PageQuery, response: { 200: listOfSchema(EventItem) } } },
    async (request) => listOf(await events.listEvents(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    '/events/:identifier',
    {
      schema: {
        summary: 'Retrieve a custom event by id or name',
        params: IdentifierParams,
        response: { 200: Type.Object({ object: Type.Literal('event'), ...EventItem.properties }) },
      },
    },
    async (request) => events.getEvent(ctx, projectOf(request), request.params.identifier),
  );

  app.patch(
    '/events/:identifier',
    {
      schema: {
        summary: "Replace a custom event's schema (null clears it)",
        params: IdentifierParams,
        body: Type.Object({ schema: Type.Optional(Nullable(EventSchema)) }),
        response: { 200: objectId('event') },
      },
    },
    async (request) => ({ object: 'event' as const, ...(await events.updateEvent(ctx, projectOf(request), request.params.identifier, request.body)) }),
  );

  app.delete(
    '/events/:identifier',
    { schema: { summary: 'Delete a custom event', params: IdentifierParams, response: { 200: deleted('event') } } },
    async (request) => ({ object: 'event' as const, ...(await events.deleteEvent(ctx, projectOf(request), request.params.identifier)), deleted: true }),
  );
}
