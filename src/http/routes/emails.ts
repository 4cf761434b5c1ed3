import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as emails from '../../domain/emails.ts';
import { idempotencyOf } from '../idempotency-key.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { Email, EmailListItem, IdempotencyHeaders, IdParams, IdResponse, listOfSchema, MAX, objectId, SendEmailBody, Str, UUID } from '../schemas.ts';

/** Attachments may total 40 MB as base64; the JSON around them needs a little more. */
const SEND_BODY_LIMIT = 41 * 1024 * 1024;

const EmailEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  recipient: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

export function emailRoutes(app: App, ctx: Context): void {
  app.post(
    '/emails',
    {
      bodyLimit: SEND_BODY_LIMIT,
      config: { access: 'sending' },
      schema: { summary: 'Send an email', headers: IdempotencyHeaders, body: SendEmailBody, response: { 200: IdResponse } },
    },
    async (request) => emails.sendEmail(ctx, request.body, request.apiKey, idempotencyOf(request, '/emails')),
  );

  app.get(
    '/emails',
    { schema: { summary: 'List sent emails', querystring: PageQuery, response: { 200: listOfSchema(EmailListItem) } } },
    async (request) => listOf(await emails.listEmails(ctx, parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/emails/:id${UUID}`,
    { schema: { summary: 'Retrieve an email', params: IdParams, response: { 200: Email } } },
    async (request) => emails.getEmail(ctx, request.params.id),
  );

  app.patch(
    `/emails/:id${UUID}`,
    {
      schema: {
        summary: 'Reschedule a scheduled email',
        params: IdParams,
        body: Type.Object({ scheduled_at: Type.Optional(Str(MAX.date)) }),
        response: { 200: objectId('email') },
      },
    },
    async (request) => {
      await emails.rescheduleEmail(ctx, request.params.id, request.body.scheduled_at);
      return { object: 'email' as const, id: request.params.id };
    },
  );

  app.post(
    `/emails/:id${UUID}/cancel`,
    { schema: { summary: 'Cancel a scheduled email', params: IdParams, response: { 200: objectId('email') } } },
    async (request) => {
      await emails.cancelEmail(ctx, request.params.id);
      return { object: 'email' as const, id: request.params.id };
    },
  );

  app.get(
    `/emails/:id${UUID}/raw`,
    {
      schema: {
        summary: 'The raw MIME message captured for an email (capture mode)',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('captured_email'), id: Type.String(), raw: Type.String() }) },
      },
    },
    async (request) => emails.getCapturedEmail(ctx, request.params.id),
  );

  app.get(
    `/emails/:id${UUID}/events`,
    {
      schema: {
        summary: 'Delivery events of an email, oldest first',
        params: IdParams,
        response: { 200: listOfSchema(EmailEvent) },
      },
    },
    async (request) => listOf(await emails.listEmailEvents(ctx, request.params.id)),
  );
}
