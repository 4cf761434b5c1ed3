import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as segments from '../../domain/contacts/segments.ts';
import { ContactParams, SegmentItem } from '../schemas/contacts.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { listOfSchema, MAX, Str, UUID } from '../schemas/common.ts';

const MembershipParams = Type.Object({ ...ContactParams.properties, segment_id: Str(MAX.id) });

// Resend's documents disagree on these answers (§12 of the reference): the union of their fields.
const Membership = Type.Object({
  object: Type.Literal('contact_segment'),
  id: Type.String({ description: 'The segment id' }),
  contact_id: Type.String(),
  segment_id: Type.String(),
});
const MembershipDeleted = Type.Object({ ...Membership.properties, audienceId: Type.String(), deleted: Type.Boolean() });

export function contactSegmentRoutes(app: App, ctx: Context): void {
  app.get(
    '/contacts/:id/segments',
    {
      schema: {
        summary: "List a contact's segments",
        params: ContactParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(SegmentItem) },
      },
    },
    async (request, reply) => replyList(reply, await segments.listContactSegments(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: true }))),
  );

  app.post(
    `/contacts/:id/segments/:segment_id${UUID}`,
    { schema: { summary: 'Add a contact to a segment', params: MembershipParams, response: { 200: Membership } } },
    async (request) => {
      const membership = await segments.addContactToSegment(ctx, projectOf(request), request.params.id, request.params.segment_id);
      return { object: 'contact_segment' as const, id: membership.segment_id, ...membership };
    },
  );

  app.delete(
    `/contacts/:id/segments/:segment_id${UUID}`,
    { schema: { summary: 'Remove a contact from a segment', params: MembershipParams, response: { 200: MembershipDeleted } } },
    async (request) => {
      const membership = await segments.removeContactFromSegment(ctx, projectOf(request), request.params.id, request.params.segment_id);
      const id = membership.segment_id;
      return { object: 'contact_segment' as const, id, audienceId: id, ...membership, deleted: true };
    },
  );
}
