import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { broadcastsMetrics, getBroadcastMetrics, METRICS_LINKS } from '../../domain/broadcasts/broadcast-metrics.ts';
import * as reports from '../../domain/broadcasts/broadcast-reports.ts';
import { projectOf } from '../auth.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { IdParams, listOfSchema, MAX, Nullable, Str, UUID } from '../schemas/common.ts';
import { MetricsQuery, MetricsResponse } from './email-metrics.ts';

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

const Share = Type.Object({ total: Type.Integer(), percentage: Type.Number({ description: 'Of sent (delivered, bounced), of delivered (opened, clicked, unsubscribed, complained) or of total (suppressed); 12.34 is 12.34%' }) });

const BroadcastMetrics = Type.Object({
  object: Type.Literal('broadcast_metrics'),
  broadcast_id: Type.String(),
  status: Type.String(),
  total: Type.Integer({ description: 'Recipients: the emails the broadcast wrote, one each' }),
  sent: Type.Integer(),
  remaining: Type.Integer({ description: 'Neither sent, suppressed nor failed yet' }),
  delivered: Share,
  opened: Share,
  clicked: Share,
  unsubscribed: Share,
  bounced: Share,
  complained: Share,
  suppressed: Share,
  clicked_links: Type.Array(
    Type.Object({ url: Type.String(), clicks: Type.Integer(), unique_clicks: Type.Integer(), percentage: Type.Number({ description: 'unique_clicks of delivered' }) }),
    { description: `The ${METRICS_LINKS} most clicked links; /clicked-links pages through all` },
  ),
});

const { domain_id: _domain, email_id: _email, ...broadcastQuery } = MetricsQuery.properties;
const BroadcastsMetricsQuery = Type.Object({
  ...broadcastQuery,
  dimensions: Type.Optional(Type.Union([Str(64), Type.Array(Str(64), { maxItems: 2 })], { description: 'period, broadcast; default: none (totals only)' })),
});

const BroadcastsMetricsResponse = Type.Object({
  ...Type.Omit(MetricsResponse, ['data']).properties,
  data: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])), { description: '{period?, id?, name?, ...metric values}' })),
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
      const result = await reports.listBroadcastRecipients(ctx, projectOf(request), request.params.id, { type, email, bounce_type }, parsePage(page, { everything: false }));
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
    async (request) => listOf(await reports.listBroadcastClickedLinks(ctx, projectOf(request), request.params.id, parsePage(request.query, { everything: false, opaque: true }))),
  );

  app.get(
    '/broadcasts/metrics',
    {
      schema: {
        summary: "Broadcasts' metrics over a range, by period and broadcast: GET /emails/metrics over the emails of broadcasts",
        querystring: BroadcastsMetricsQuery,
        response: { 200: BroadcastsMetricsResponse },
      },
    },
    async (request) => broadcastsMetrics(ctx, projectOf(request), request.query),
  );

  app.get(
    `/broadcasts/:id${UUID}/metrics`,
    { schema: { summary: "A broadcast's recipients, sends and what they did, each with a percentage, and its most clicked links", params: IdParams, response: { 200: BroadcastMetrics } } },
    async (request) => getBroadcastMetrics(ctx, projectOf(request), request.params.id),
  );
}
