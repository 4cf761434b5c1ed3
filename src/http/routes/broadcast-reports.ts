import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as reports from '../../domain/broadcasts/broadcast-reports.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { IdParams, listOfSchema, MAX, Nullable, Str, UUID } from '../schemas.ts';

// `type` and `bounce_type` stay strings here: the domain answers a wrong value with Resend's message.
const RecipientsQuery = Type.Object({
  type: Type.Optional(Str(MAX.short, 'Required: sent, delivered, opened, clicked, bounced, complained, unsubscribed or suppressed')),
  email: Type.Optional(Str(MAX.line, 'Only this address (any case)')),
  bounce_type: Type.Optional(Str(MAX.short, 'With type=bounced only: permanent, transient or undetermined')),
  ...PageQuery.properties,
});

const Recipient = Type.Object({
  id: Type.String({ description: "The id of the recipient's email; the list's cursor" }),
  contact_id: Nullable(Type.String()),
  email: Type.String(),
  count: Type.Optional(Type.Integer({ description: 'opened and clicked: how many times' })),
  bounce_type: Type.Optional(Type.String({ description: 'bounced: permanent, transient or undetermined' })),
  clicked_links: Type.Optional(Type.Array(Type.Object({ url: Type.String(), clicks: Type.Integer() }), { description: 'clicked: the links, most clicked first' })),
});

const ClickedLink = Type.Object({
  id: Type.String({ description: "An opaque cursor: the link's place in the list" }),
  url: Type.String(),
  clicks: Type.Integer(),
  unique_clicks: Type.Integer({ description: 'How many recipients clicked it' }),
});

/** What a broadcast's recipients did with it: by event type, and the links they clicked. */
export function broadcastReportRoutes(app: App, ctx: Context): void {
  app.get(
    `/broadcasts/:id${UUID}/recipients`,
    {
      schema: {
        summary: "A broadcast's recipients with an event of one type (opened, clicked, bounced...), newest email first",
        params: IdParams,
        querystring: RecipientsQuery,
        response: { 200: listOfSchema(Recipient) },
      },
    },
    async (request) => {
      const { type, email, bounce_type, ...page } = request.query;
      const result = await reports.listBroadcastRecipients(ctx, request.params.id, { type, email, bounce_type }, parsePage(page, { everything: false }));
      return listOf(result);
    },
  );

  app.get(
    `/broadcasts/:id${UUID}/clicked-links`,
    {
      schema: {
        summary: "The links clicked in a broadcast's emails, most clicked first",
        params: IdParams,
        querystring: PageQuery,
        response: { 200: listOfSchema(ClickedLink) },
      },
    },
    async (request) => listOf(await reports.listBroadcastClickedLinks(ctx, request.params.id, parsePage(request.query, { everything: false, opaque: true }))),
  );
}
