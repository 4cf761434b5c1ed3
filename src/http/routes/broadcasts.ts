import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as broadcasts from '../../domain/broadcasts/broadcasts.ts';
import { projectOf } from '../auth.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { AddressList, CONTENT_BODY_LIMIT, deleted, IdParams, listOfSchema, MAX, Nullable, objectId, Str, UUID } from '../schemas/common.ts';

// Optional fields of a broadcast; null clears one on update.
const nullable = (maxLength: number, description: string) => Type.Optional(Type.Union([Str(maxLength), Type.Null()], { description }));

const contentFields = {
  name: nullable(MAX.short, 'a string or null: for your own reference'),
  segment_id: Type.Optional(Str(MAX.id, 'The segment to send to')),
  audience_id: Type.Optional(Str(MAX.id, 'Deprecated: the same as segment_id')),
  from: Type.Optional(Str(MAX.line, '"email@example.com" or "Name <email@example.com>"')),
  subject: Type.Optional(Str(MAX.line, 'May hold {{{contact.<field>|fallback}}} placeholders')),
  reply_to: Type.Optional(Type.Union([...AddressList.anyOf, Type.Null()], { description: 'an email address, an array of them, or null' })),
  preview_text: nullable(MAX.text, 'a string or null: the inbox preview, hidden at the top of the html'),
  html: Type.Optional(Str(MAX.body, 'May hold placeholders and {{{RESEND_UNSUBSCRIBE_URL}}}')),
  text: nullable(MAX.body, 'a string or null: without it, the text part is generated from the rendered html; "" sends none'),
  topic_id: nullable(MAX.id, 'a string or null: only contacts the topic allows receive it'),
};

const CreateBody = Type.Object({
  ...contentFields,
  send: Type.Optional(Type.Boolean({ description: 'true sends at once (or at scheduled_at); default: a draft' })),
  scheduled_at: Type.Optional(Str(MAX.date, 'With send: true; ISO 8601 or natural language, at most 30 days ahead')),
});

const BroadcastListItem = Type.Object({
  id: Type.String(),
  name: Nullable(Type.String()),
  audience_id: Type.String(),
  segment_id: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  scheduled_at: Nullable(Type.String()),
  sent_at: Nullable(Type.String()),
  topic_id: Nullable(Type.String()),
});

const Broadcast = Type.Object({
  object: Type.Literal('broadcast'),
  ...BroadcastListItem.properties,
  from: Type.String(),
  subject: Type.String(),
  reply_to: Nullable(Type.Array(Type.String())),
  preview_text: Nullable(Type.String()),
  html: Nullable(Type.String()),
  text: Nullable(Type.String()),
  // Mailroom's, only while the guards pause its domain: why, since when, and how many of its emails wait.
  sending_paused: Type.Optional(Type.Object({ reason: Type.String(), since: Type.String(), waiting: Type.Integer() })),
});

const answer = async (result: Promise<{ id: string }>) => ({ object: 'broadcast' as const, ...(await result) });

export function broadcastRoutes(app: App, ctx: Context): void {
  app.post(
    '/broadcasts',
    {
      bodyLimit: CONTENT_BODY_LIMIT,
      schema: {
        summary: 'Create a broadcast: a draft, or sent (or scheduled) with send: true',
        body: CreateBody,
        response: { 201: objectId('broadcast') },
      },
    },
    async (request, reply) => reply.status(201).send(await answer(broadcasts.createBroadcast(ctx, projectOf(request), request.body))),
  );

  app.get(
    '/broadcasts',
    {
      schema: {
        summary: 'List broadcasts, all of them when limit is omitted',
        querystring: PageQuery,
        response: { 200: listOfSchema(BroadcastListItem) },
      },
    },
    async (request, reply) => replyList(reply, await broadcasts.listBroadcasts(ctx, projectOf(request), parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/broadcasts/:id${UUID}`,
    { schema: { summary: 'Retrieve a broadcast', params: IdParams, response: { 200: Broadcast } } },
    async (request) => broadcasts.getBroadcast(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    `/broadcasts/:id${UUID}`,
    {
      bodyLimit: CONTENT_BODY_LIMIT,
      schema: {
        summary: 'Update a draft broadcast; once sent or scheduled, only its name',
        params: IdParams,
        body: Type.Object(contentFields),
        response: { 200: objectId('broadcast') },
      },
    },
    async (request) => answer(broadcasts.updateBroadcast(ctx, projectOf(request), request.params.id, request.body)),
  );

  app.delete(
    `/broadcasts/:id${UUID}`,
    { schema: { summary: 'Delete a draft or scheduled broadcast', params: IdParams, response: { 200: deleted('broadcast') } } },
    async (request) => ({ ...(await answer(broadcasts.deleteBroadcast(ctx, projectOf(request), request.params.id))), deleted: true }),
  );

  app.post(
    `/broadcasts/:id${UUID}/send`,
    {
      schema: {
        summary: 'Send a draft broadcast now, or at scheduled_at',
        params: IdParams,
        body: Type.Object({ scheduled_at: Type.Optional(Str(MAX.date, 'ISO 8601 or natural language, at most 30 days ahead')) }),
        response: { 200: objectId('broadcast') },
      },
    },
    async (request) => answer(broadcasts.sendBroadcast(ctx, projectOf(request), request.params.id, request.body.scheduled_at)),
  );

  app.post(
    `/broadcasts/:id${UUID}/cancel`,
    { schema: { summary: 'Cancel a scheduled (back to draft) or queued broadcast', params: IdParams, response: { 200: objectId('broadcast') } } },
    async (request) => answer(broadcasts.cancelBroadcast(ctx, projectOf(request), request.params.id)),
  );

  app.post(
    `/broadcasts/:id${UUID}/duplicate`,
    { schema: { summary: 'Copy a broadcast into a new draft', params: IdParams, response: { 200: objectId('broadcast') } } },
    async (request) => answer(broadcasts.duplicateBroadcast(ctx, projectOf(request), request.params.id)),
  );
}
