import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as attachments from '../../domain/emails/sent-attachments.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { AttachmentListItem, AttachmentObject, listOfSchema, MAX, Str, UUID } from '../schemas/common.ts';

const AttachmentParams = Type.Object({ id: Str(MAX.id), attachment_id: Str(MAX.id) });

/** The attachments of sent emails, each with a signed download link (routes/downloads.ts serves it). */
export function emailAttachmentRoutes(app: App, ctx: Context): void {
  app.get(
    `/emails/:id${UUID}/attachments`,
    {
      schema: {
        summary: "A sent email's attachments, in the order they were given (all of them without `limit`)",
        params: Type.Object({ id: Str(MAX.id) }),
        querystring: PageQuery,
        response: { 200: listOfSchema(AttachmentListItem) },
      },
    },
    async (request) => listOf(await attachments.listEmailAttachments(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/emails/:id${UUID}/attachments/:attachment_id${UUID}`,
    { schema: { summary: 'Retrieve an attachment of a sent email', params: AttachmentParams, response: { 200: AttachmentObject } } },
    async (request) => attachments.getEmailAttachment(ctx, projectOf(request), request.params.id, request.params.attachment_id),
  );
}
