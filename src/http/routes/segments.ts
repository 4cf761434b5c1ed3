import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import * as segments from '../../domain/contacts/segments.ts';
import { ContactItem, SegmentItem } from '../contact-schemas.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { deleted, IdParams, listOfSchema, MAX, objectId, Str, UUID } from '../schemas.ts';

export const SegmentBody = Type.Object({ name: Str(MAX.short) });

interface Naming {
  path: '/segments' | '/audiences';
  object: 'segment' | 'audience';
  /** For the summaries: "a segment", "an audience (deprecated)". */
  noun: string;
}

/**
 * Segments and the legacy audiences are one resource under two names: the same rows, answered with
 * `object: "segment"` or `object: "audience"`.
 */
function segmentResource(app: App, ctx: Context, { path, object, noun }: Naming): void {
  app.post(
    path,
    {
      schema: {
        summary: `Create ${noun}`,
        body: SegmentBody,
        response: { 201: Type.Object({ object: Type.Literal(object), id: Type.String(), name: Type.String() }) },
      },
    },
    async (request, reply) => {
      const segment = await segments.createSegment(ctx, request.body);
      return reply.status(201).send({ object, id: segment.id, name: segment.name });
    },
  );

  app.get(
    path,
    {
      schema: {
        summary: `List ${object}s,
        all of them when limit is omitted`,
        querystring: PageQuery,
        response: { 200: listOfSchema(SegmentItem) },
      },
    },
    async (request, reply) => replyList(reply, await segments.listSegments(ctx, parsePage(request.query, { everything: true }))),
  );

  app.get(
    `${path}/:id${UUID}`,
    {
      schema: {
        summary: `Retrieve ${noun}`,
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal(object), ...SegmentItem.properties }) },
      },
    },
    async (request) => ({ object, ...(await segments.findSegmentOrThrow(ctx, request.params.id)) }),
  );

  app.delete(
    `${path}/:id${UUID}`,
    { schema: { summary: `Delete ${noun}; its contacts stay`, params: IdParams, response: { 200: deleted(object) } } },
    async (request) => {
      await segments.deleteSegment(ctx, request.params.id);
      return { object, id: request.params.id, deleted: true };
    },
  );

  app.get(
    `${path}/:id${UUID}/contacts`,
    {
      schema: {
        summary: `List the contacts of ${noun}, all of them when limit is omitted`,
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(ContactItem) },
      },
    },
    async (request, reply) => replyList(reply, await contacts.listContacts(ctx, parsePage(request.query, { everything: true }), request.params.id)),
  );
}

export function segmentRoutes(app: App, ctx: Context): void {
  segmentResource(app, ctx, { path: '/segments', object: 'segment', noun: 'a segment' });
  segmentResource(app, ctx, { path: '/audiences', object: 'audience', noun: 'an audience (deprecated: a segment)' });

  app.patch(
    `/segments/:id${UUID}`,
    { schema: { summary: 'Rename a segment', params: IdParams, body: SegmentBody, response: { 200: objectId('segment') } } },
    async (request) => {
      await segments.renameSegment(ctx, request.params.id, request.body);
      return { object: 'segment' as const, id: request.params.id };
    },
  );
}
