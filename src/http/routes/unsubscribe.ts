import multipart from '@fastify/multipart';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as unsubscribe from '../../domain/recipients/unsubscribe.ts';
import { errorPageOf } from '../../dashboard/error-page.ts';
import { MAX, Str } from '../schemas/common.ts';
import { messagePage, preferencesPage } from '../unsubscribe-page.ts';

const HTML = 'text/html; charset=utf-8';

// The page loads nothing, runs no script, posts only to itself and is never framed, cached or named in
// a Referer: its URL is the contact's credential.
const PAGE_HEADERS = {
  'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

const TokenParams = Type.Object({ token: Str(512, 'The signed token of an unsubscribe link') });

const Form = Type.Object({
  'List-Unsubscribe': Type.Optional(Str(MAX.short, 'RFC 8058 one-click: "One-Click"')),
  topic_id: Type.Optional(Str(MAX.id, 'Leave this topic')),
  everything: Type.Optional(Str(MAX.short, 'Leave everything')),
});

const htmlPage = (description: string) => ({ description, content: { 'text/html': { schema: Type.String({ description: 'A small html page' }) } } });

const HtmlPage = htmlPage("The contact's choices");

// Errors answer as pages too (handlePageError), in place of the JSON errors of every other route.
const PageErrors = {
  '4xx': htmlPage('What went wrong: an altered or unknown link, an unknown topic, nothing chosen'),
  '5xx': htmlPage('Please try again later'),
};

/** Errors here answer as pages, not JSON: a person reads them, in a browser. */
function handlePageError(error: unknown, request: FastifyRequest, reply: FastifyReply): void {
  const { status, title, message } = errorPageOf(error, request, reply, 'unsubscribe page', 'Link not found');
  void reply.status(status).type(HTML).send(messagePage(title, message));
}

/**
 * The unsubscribe link of broadcast emails (public: the signed token is the credential). The page
 * lists the contact's choices; POST takes the page's forms and RFC 8058 one-click requests, which mail
 * clients send as urlencoded or multipart form data: the only forms the API reads.
 */
export function unsubscribeRoutes(app: App, ctx: Context): void {
  void app.register(async (plugin) => {
    const scope = plugin.withTypeProvider<TypeBoxTypeProvider>();
    await scope.register(multipart, { attachFieldsToBody: 'keyValues', limits: { files: 0, fields: 10, fieldSize: 1000 } });
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 64 * 1024 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(body as string)));
    });
    scope.setErrorHandler(handlePageError);
    scope.addHook('onSend', async (_request, reply) => void reply.headers(PAGE_HEADERS));

    scope.get(
      '/unsubscribe/:token',
      {
        config: { access: 'public' },
        schema: { summary: "A contact's unsubscribe page (html)", params: TokenParams, produces: ['text/html'], response: { 200: HtmlPage, ...PageErrors } },
      },
      async (request, reply) => reply.type(HTML).send(preferencesPage(await unsubscribe.getPreferences(ctx, request.params.token))),
    );

    scope.post(
      '/unsubscribe/:token',
      {
        config: { access: 'public' },
        schema: {
          summary: "Leave a topic or everything: the page's forms and RFC 8058 one-click (html)",
          params: TokenParams,
          body: Form,
          consumes: ['application/x-www-form-urlencoded', 'multipart/form-data'],
          produces: ['text/html'],
          response: { 200: HtmlPage, ...PageErrors },
        },
      },
      async (request, reply) =>
        reply.type(HTML).send(preferencesPage(await unsubscribe.unsubscribe(ctx, request.params.token, request.body ?? {}))),
    );
  });
}
