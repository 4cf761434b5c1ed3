import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as domains from '../../domain/sending-domains/domains.ts';
import { PageQuery, parsePage, replyList } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { deleted, IdParams, listOfSchema, MAX, objectId, Str, UUID } from '../schemas/common.ts';

const Capabilities = Type.Object({
  sending: Type.Optional(Str(MAX.short, '"enabled" (default) or "disabled": a domain that only receives; one of the two stays enabled')),
  receiving: Type.Optional(Str(MAX.short, '"enabled" or "disabled" (default): enabled adds the Receiving MX record')),
});

const SendingPause = Type.Union([Type.Object({ reason: Type.String(), since: Type.String() }), Type.Null()], {
  description: 'Mailroom: why and since when the guards hold its marketing mail (broadcasts, automations); null while it sends',
});

const WarmupInput = Type.Union(
  [
    Type.Object({
      start: Type.Number({ description: "The first day's volume: a whole number, 1 or more" }),
      days: Type.Number({ description: 'Days until no limit: a whole number, 1 to 365' }),
    }),
    Type.Null(),
  ],
  { description: "Mailroom: a warm-up starting today, its daily volume growing geometrically from `start` to no limit after `days`; replaces daily_limit while it runs. null ends it" },
);

const Warmup = Type.Union(
  [
    Type.Object({
      start: Type.Integer(),
      days: Type.Integer(),
      started_at: Type.String({ description: 'Day 0 is its UTC day' }),
      today_limit: Type.Union([Type.Integer(), Type.Null()], { description: 'Messages it may send this UTC day; null once the warm-up is over' }),
    }),
    Type.Null(),
  ],
  { description: "Mailroom: the domain's warm-up (docs/deliverability.md); null: none" },
);

const Settings = {
  open_tracking: Type.Optional(Type.Boolean()),
  click_tracking: Type.Optional(Type.Boolean()),
  tls: Type.Optional(Str(MAX.short, '"opportunistic" (default) or "enforced": STARTTLS required in direct delivery')),
  capabilities: Type.Optional(Capabilities),
  tracking_subdomain: Type.Optional(Str(MAX.short)),
  warmup: Type.Optional(WarmupInput),
  daily_limit: Type.Optional(
    Type.Union([Type.Integer(), Type.Null()], { description: 'Mailroom: messages it may send a UTC day (warm-up); the rest waits for the next day. null: no limit (default)' }),
  ),
};

const DmarcReports = Type.Union([Type.Object({ address: Str(MAX.line, 'dmarc@<the domain or another receiving domain>') }), Type.Null()], {
  description: 'Mailroom: where its DMARC aggregate reports are read (the domain must receive mail); null: not read (docs/reports.md)',
});

const Update = {
  ...Settings,
  sending_paused: Type.Optional(Type.Boolean({ description: 'Mailroom: false resumes marketing mail the guards paused; true is refused' })),
  dmarc_reports: Type.Optional(DmarcReports),
};

const DomainRecord = Type.Object({
  record: Type.String({ description: 'SPF, DKIM, DMARC, Receiving, MTA-STS, TLS-RPT or Tracking' }),
  name: Type.String({ description: 'Relative to the domain ("@": the domain itself)' }),
  type: Type.String(),
  ttl: Type.String(),
  status: Type.String(),
  value: Type.String(),
  priority: Type.Optional(Type.Integer()),
});

const DomainListItem = Type.Object({
  id: Type.String(),
  name: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  region: Type.String(),
  open_tracking: Type.Boolean(),
  click_tracking: Type.Boolean(),
  capabilities: Type.Object({ sending: Type.String(), receiving: Type.String() }),
});

const DomainBody = Type.Object({
  ...DomainListItem.properties,
  tracking_subdomain: Type.Optional(Type.String()),
  custom_return_path: Type.String(),
  tls: Type.String(),
  daily_limit: Type.Union([Type.Integer(), Type.Null()]),
  warmup: Warmup,
  sending_paused: SendingPause,
  dmarc_reports: DmarcReports,
  records: Type.Array(DomainRecord),
});

export function domainRoutes(app: App, ctx: Context): void {
  app.post(
    '/domains',
    {
      schema: {
        summary: 'Add a domain: its DNS records, with a new DKIM key',
        body: Type.Object({
          name: Str(MAX.short),
          region: Type.Optional(Str(MAX.short, 'us-east-1 (default), eu-west-1, sa-east-1 or ap-northeast-1; recorded only')),
          custom_return_path: Type.Optional(Str(MAX.short, 'Subdomain of the envelope sender (default "send")')),
          ...Settings,
        }),
        response: { 201: DomainBody },
      },
    },
    async (request, reply) => reply.status(201).send(await domains.createDomain(ctx, projectOf(request), request.body)),
  );

  app.get(
    '/domains',
    { schema: { summary: 'List domains', querystring: PageQuery, response: { 200: listOfSchema(DomainListItem) } } },
    async (request, reply) => replyList(reply, await domains.listDomains(ctx, projectOf(request), parsePage(request.query, { everything: true }))),
  );

  app.get(
    `/domains/:id${UUID}`,
    {
      schema: {
        summary: 'Retrieve a domain with its DNS records and their status',
        params: IdParams,
        response: { 200: Type.Object({ object: Type.Literal('domain'), ...DomainBody.properties }) },
      },
    },
    async (request) => domains.getDomain(ctx, projectOf(request), request.params.id),
  );

  app.patch(
    `/domains/:id${UUID}`,
    {
      schema: { summary: 'Update a domain', params: IdParams, body: Type.Object(Update), response: { 200: objectId('domain') } },
    },
    async (request) => {
      await domains.updateDomain(ctx, projectOf(request), request.params.id, request.body);
      return { object: 'domain' as const, id: request.params.id };
    },
  );

  app.delete(
    `/domains/:id${UUID}`,
    { schema: { summary: 'Delete a domain and its DKIM key', params: IdParams, response: { 200: deleted('domain') } } },
    async (request) => {
      await domains.deleteDomain(ctx, projectOf(request), request.params.id);
      return { object: 'domain' as const, id: request.params.id, deleted: true };
    },
  );

  app.post(
    `/domains/:id${UUID}/verify`,
    {
      schema: {
        summary: 'Look the DNS records up now (asynchronously), then again with backoff for 72 hours',
        params: IdParams,
        response: { 200: objectId('domain') },
      },
    },
    async (request) => {
      await domains.verifyDomain(ctx, projectOf(request), request.params.id);
      return { object: 'domain' as const, id: request.params.id };
    },
  );
}
