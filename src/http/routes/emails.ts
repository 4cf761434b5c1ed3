import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as emails from '../../domain/emails/emails.ts';
import { idempotencyOf } from '../idempotency-key.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { Email, EmailListItem, IdempotencyHeaders, IdParams, IdResponse, listOfSchema, MAX, objectId, SendEmailBody, Str, UUID } from '../schemas/common.ts';

/** Attachments may total 40 MB as base64; the JSON around them needs a little more. */
const SEND_BODY_LIMIT = 41 * 1024 * 1024;

/** Other paths of `POST /emails`. */
const SEND_ALIASES = ['/email', '/emails/sending', '/email/sending'];

const EmailEvent = Type.Object({
  id: Type.String(),
  type: Type.String(),
  recipient: Type.Union([Type.String(), Type.Null()]),
  response: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String(),
});

const CapturedEmail = Type.Object({ object: Type.Literal('captured_email'), id: Type.String(), raw: Type.String() });

const RFC822 = 'message/rfc822';

/** The q-value an Accept header gives a media type by name (not by a wildcard), 0 when it names it not. */
function namedQuality(accept: string, type: string): number {
  for (const range of accept.split(',')) {
    const [name, ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    if (name !== type) continue;
    const q = params.find((param) => param.startsWith('q='));
    return q === undefined ? 1 : Number(q.slice(2)) || 0;
  }
  return 0;
}

/** Whether a client asks for the message itself: it names message/rfc822, and JSON no higher. JSON is the default. */
function prefersRfc822(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const rfc822 = namedQuality(accept, RFC822);
  return rfc822 > 0 && rfc822 >= namedQuality(accept, 'application/json');
}

export function emailRoutes(app: App, ctx: Context): void {
  // Resend's newer paths for the same send (its OAuth scopes name them `emails:send`); an idempotency
  // key means the same on each.
  for (const path of ['/emails', ...SEND_ALIASES]) {
    app.post(
      path,
      {
        bodyLimit: SEND_BODY_LIMIT,
        config: { access: 'sending' },
        schema: {
          summary: path === '/emails' ? 'Send an email' : 'Send an email: an alias of POST /emails',
          headers: IdempotencyHeaders,
          body: SendEmailBody,
          response: { 200: IdResponse },
        },
      },
      async (request, reply) => {
        const headers: emails.SendHeaders = {};
        const sent = await emails.sendEmail(ctx, request.body, request.apiKey!, idempotencyOf(request, '/emails'), headers);
        return reply.headers(headers).send(sent);
      },
    );
  }

  app.get(
    '/emails',
    { schema: { summary: 'List sent emails', querystring: PageQuery, response: { 200: listOfSchema(EmailListItem) } } },
    async (request) => listOf(await emails.listEmails(ctx, projectOf(request), parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/emails/:id${UUID}`,
    { schema: { summary: 'Retrieve an email', params: IdParams, response: { 200: Email } } },
    async (request) => emails.getEmail(ctx, projectOf(request), request.params.id),
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
      await emails.rescheduleEmail(ctx, projectOf(request), request.params.id, request.body.scheduled_at);
      return { object: 'email' as const, id: request.params.id };
    },
  );

  app.post(
    `/emails/:id${UUID}/cancel`,
    { schema: { summary: 'Cancel a scheduled email', params: IdParams, response: { 200: objectId('email') } } },
    async (request) => {
      await emails.cancelEmail(ctx, projectOf(request), request.params.id);
      return { object: 'email' as const, id: request.params.id };
    },
  );

  app.get(
    `/emails/:id${UUID}/raw`,
    {
      schema: {
        summary:
          'The raw MIME message of an email, as captured (capture mode) or as submitted over SMTP: JSON, or with `Accept: message/rfc822` the .eml file',
        params: IdParams,
        response: {
          200: {
            description: 'The captured message',
            content: {
              'application/json': { schema: CapturedEmail },
              'message/rfc822': { schema: Type.Unsafe<Buffer>({ type: 'string', format: 'binary', description: 'The message itself, as an attachment named <id>.eml' }) },
            },
          },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      if (!prefersRfc822(request.headers.accept)) return emails.getRawEmail(ctx, projectOf(request), id);
      const raw = await emails.getRawMessage(ctx, projectOf(request), id);
      return reply.type(RFC822).header('content-disposition', `attachment; filename="${id}.eml"`).send(raw);
    },
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
    async (request) => listOf(await emails.listEmailEvents(ctx, projectOf(request), request.params.id)),
  );
}
