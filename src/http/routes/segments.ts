import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import { segmentsMetrics } from '../../domain/contacts/segment-metrics.ts';
import * as segments from '../../domain/contacts/segments.ts';
import { ContactItem, SegmentItem } from '../schemas/contacts.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { SegmentBody } from '../schemas/contacts.ts';
import { deleted, IdParams, listOfSchema, MAX, objectId, Str, UUID } from '../schemas/common.ts';

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
      const segment = await segments.createSegment(ctx, projectOf(request), request.body);
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
    async (request, reply) => replyList(reply, await segments.listSegments(ctx, projectOf(request), parsePage(request.query, { everything: true }))),
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
    async (request) => ({ object, ...(await segments.findSegmentOrThrow(ctx, projectOf(request), request.params.id)) }),
  );

  app.delete(
    `${path}/:id${UUID}`,
    { schema: { summary: `Delete ${noun}; its contacts stay`, params: IdParams, response: { 200: deleted(object) } } },
    async (request) => {
      await segments.deleteSegment(ctx, projectOf(request), request.params.id);
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
    async (request, reply) => replyList(reply, await contacts.listContacts(ctx, projectOf(request), parsePage(request.query, { everything: true }), request.params.id)),
  );
}

const Ids = (description: string) => Type.Optional(Type.Union([Str(8 * 1024), Type.Array(Str(MAX.id), { maxItems: 100 })], { description }));

const SegmentMetricsQuery = Type.Object({
  segment_id: Ids('Up to 100 segment ids (repeated or comma-separated); default: every segment'),
  'filter.segmentId[]': Ids('The same, as Resend\'s dashboard writes it'),
  sort_by: Type.Optional(Str(MAX.short, '"date": when the segment was created (the default)')),
  sort_order: Type.Optional(Str(MAX.short, '"desc" (default) or "asc"')),
  start_date: Type.Optional(Str(MAX.date, 'Count only contacts created on or after it (ISO 8601 date or datetime)')),
  end_date: Type.Optional(Str(MAX.date, 'Count only contacts created before its end (a date: its whole day)')),
  timezone: Type.Optional(Str(MAX.short, 'IANA time zone of dates without an offset; default UTC')),
});

const SegmentCounts = { all_contacts: Type.Integer(), subscribers: Type.Integer({ description: 'Contacts not unsubscribed' }), unsubscribers: Type.Integer() };

const SegmentMetrics = Type.Object({
  object: Type.Literal('segments_metrics'),
  totals: Type.Object(SegmentCounts, { description: 'Each contact once, however many of the segments it is in' }),
  data: Type.Array(Type.Object({ segment_id: Type.String(), segment_name: Type.String(), ...SegmentCounts })),
});

export function segmentRoutes(app: App, ctx: Context): void {
  app.get(
    '/segments/metrics',
    { schema: { summary: "Segments' contacts now: all, subscribed and unsubscribed", querystring: SegmentMetricsQuery, response: { 200: SegmentMetrics } } },
    async (request) => segmentsMetrics(ctx, projectOf(request), request.query),
  );

  segmentResource(app, ctx, { path: '/segments', object: 'segment', noun: 'a segment' });
  segmentResource(app, ctx, { path: '/audiences', object: 'audience', noun: 'an audience (deprecated: a segment)' });

  app.patch(
    `/segments/:id${UUID}`,
    { schema: { summary: 'Rename a segment', params: IdParams, body: SegmentBody, response: { 200: objectId('segment') } } },
    async (request) => {
      await segments.renameSegment(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'segment' as const, id: request.params.id };
    },
  );
}
