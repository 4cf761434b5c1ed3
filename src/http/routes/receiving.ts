import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as received from '../../domain/receiving/received-emails.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage, replyList } from '../pagination.ts';
import { AttachmentListItem, AttachmentObject, IdParams, listOfSchema, MAX, Nullable, Str, UUID } from '../schemas/common.ts';

const Addresses = Type.Array(Type.String());

const AttachmentSummary = Type.Object({
  id: Type.String(),
  filename: Nullable(Type.String()),
  content_type: Type.String(),
  content_id: Nullable(Type.String()),
  content_disposition: Nullable(Type.String()),
  size: Type.Number(),
});

const ReceivedListItem = Type.Object({
  id: Type.String(),
  to: Addresses,
  from: Type.String({ description: 'The bare address of the From header' }),
  created_at: Type.String(),
  subject: Type.String(),
  bcc: Addresses,
  cc: Addresses,
  reply_to: Addresses,
  received_for: Type.Array(Type.String(), { description: 'The envelope recipients (RCPT TO) Mailroom accepted' }),
  message_id: Type.String(),
  attachments: Type.Array(AttachmentSummary),
});

const ReceivedEmail = Type.Object({
  object: Type.Literal('email'),
  ...ReceivedListItem.properties,
  html: Nullable(Type.String()),
  html_format: Type.String({ description: '`data_uri` (inline images embedded) or `cid` (their `cid:` links kept)' }),
  text: Nullable(Type.String()),
  headers: Type.Record(Type.String(), Type.String()),
  authentication: Nullable(
    Type.Object({
      spf: Type.String(),
      dkim: Type.String(),
      dmarc: Type.String(),
    }, { description: 'pass, fail, softfail, neutral, none, temperror or permerror, as mailauth reports them' }),
  ),
  raw: Nullable(Type.Object({ download_url: Type.String(), expires_at: Type.String() })),
  body_removed_at: Type.Optional(
    Type.String({ description: "Mailroom's addition, once retention (MAILROOM_RETENTION_DAYS) removed the email's html, text, attachments and raw message: when" }),
  ),
});

const AttachmentParams = Type.Object({ id: Str(MAX.id), attachment_id: Str(MAX.id) });

/** Resend's receiving API: what the inbound SMTP server took (src/smtp/inbound-server.ts). */
export function receivingRoutes(app: App, ctx: Context): void {
  app.get(
    '/emails/receiving',
    { schema: { summary: 'List received emails, newest first (all of them without `limit`)', querystring: PageQuery, response: { 200: listOfSchema(ReceivedListItem) } } },
    async (request, reply) => replyList(reply, await received.listReceivedEmails(ctx, projectOf(request), parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/emails/receiving/:id${UUID}`,
    {
      schema: {
        summary: 'Retrieve a received email',
        params: IdParams,
        querystring: Type.Object({ html_format: Type.Optional(Type.Union([Type.Literal('data_uri'), Type.Literal('cid')])) }),
        response: { 200: ReceivedEmail },
      },
    },
    async (request) => received.getReceivedEmail(ctx, projectOf(request), request.params.id, request.query.html_format),
  );

  app.get(
    `/emails/receiving/:id${UUID}/attachments`,
    {
      schema: {
        summary: "A received email's attachments, in the message's order (all of them without `limit`)",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(AttachmentListItem) },
      },
    },
    async (request) => listOf(await received.listReceivedAttachments(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/emails/receiving/:id${UUID}/attachments/:attachment_id${UUID}`,
    { schema: { summary: 'Retrieve an attachment of a received email', params: AttachmentParams, response: { 200: AttachmentObject } } },
    async (request) => received.getReceivedAttachment(ctx, projectOf(request), request.params.id, request.params.attachment_id),
  );
}
