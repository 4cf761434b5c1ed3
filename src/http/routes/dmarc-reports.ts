import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as dmarc from '../../domain/dmarc/dmarc-reports.ts';
import { listOf, PageQuery, parsePage } from '../pagination.ts';
import { projectOf } from '../auth.ts';
import { IdParams, listOfSchema, MAX, Nullable, Str, UUID } from '../schemas/common.ts';

// Mailroom's own: the DMARC aggregate reports read from mail, and a domain's sources (docs/reports.md).

const Period = {
  from: Type.Optional(Str(MAX.short, 'A date or time (ISO 8601): reports whose period ends after it')),
  to: Type.Optional(Str(MAX.short, 'A date or time (ISO 8601): reports whose period begins before it')),
};

const Pass = Type.Object({ pass: Type.Integer(), fail: Type.Integer() });

const Policy = Type.Object({
  p: Nullable(Type.String()),
  sp: Nullable(Type.String()),
  adkim: Nullable(Type.String()),
  aspf: Nullable(Type.String()),
  pct: Nullable(Type.Integer()),
});

const ReportItem = Type.Object({
  object: Type.Literal('dmarc_report'),
  id: Type.String(),
  domain_id: Type.String(),
  domain: Type.String({ description: 'The domain of the policy, as the report names it' }),
  org_name: Type.String({ description: 'Who sent the report (google.com, Yahoo, ...)' }),
  email: Nullable(Type.String()),
  report_id: Type.String({ description: "The reporter's id of the report: with org_name, it names the report (a resent one is stored once)" }),
  date_begin: Type.String(),
  date_end: Type.String(),
  policy: Type.Object(Policy.properties, { description: 'The policy published, as the reporter saw it' }),
  messages: Type.Integer(),
  row_count: Type.Integer(),
  received_at: Type.String(),
});

const Row = Type.Object({
  source_ip: Type.String(),
  count: Type.Integer(),
  disposition: Type.String({ description: 'none, quarantine or reject: what the receiver did' }),
  dkim: Type.String({ description: 'DKIM: pass when a signature verified' }),
  spf: Type.String(),
  dkim_aligned: Type.String({ description: "pass: DKIM passed for From's domain (aligned)" }),
  spf_aligned: Type.String({ description: "pass: SPF passed for a return path aligned with From's domain" }),
  header_from: Type.String(),
  envelope_from: Nullable(Type.String()),
  auth_results: Type.Object({
    dkim: Type.Array(Type.Object({ domain: Type.String(), selector: Nullable(Type.String()), result: Type.String() })),
    spf: Type.Array(Type.Object({ domain: Type.String(), scope: Nullable(Type.String()), result: Type.String() })),
  }),
});

const Summary = Type.Object({
  object: Type.Literal('dmarc_summary'),
  domain_id: Type.String(),
  name: Type.String(),
  from: Type.String(),
  to: Type.String(),
  reports: Type.Integer(),
  messages: Type.Integer(),
  sources: Type.Array(
    Type.Object({
      source_ip: Type.String(),
      ours: Type.Boolean({ description: "Mailroom's own: a sending address, or the relay's" }),
      messages: Type.Integer(),
      spf: Pass,
      dkim: Pass,
      alignment: Type.Object(Pass.properties, { description: 'DMARC: DKIM or SPF passed aligned with From' }),
    }),
  ),
});

export function dmarcReportRoutes(app: App, ctx: Context): void {
  app.get(
    '/dmarc/reports',
    {
      schema: {
        summary: 'List the DMARC aggregate reports received, newest first (always paginated, 20 by default)',
        querystring: Type.Object({ ...PageQuery.properties, domain_id: Type.Optional(Str(MAX.id, 'Only the reports of this domain')), ...Period }),
        response: { 200: listOfSchema(ReportItem) },
      },
    },
    async (request) => listOf(await dmarc.listDmarcReports(ctx, projectOf(request), request.query, parsePage(request.query, { everything: false }))),
  );

  app.get(
    `/dmarc/reports/:id${UUID}`,
    { schema: { summary: 'Retrieve a DMARC aggregate report with its rows', params: IdParams, response: { 200: Type.Object({ ...ReportItem.properties, rows: Type.Array(Row) }) } } },
    async (request) => dmarc.getDmarcReport(ctx, projectOf(request), request.params.id),
  );

  app.get(
    `/domains/:id${UUID}/dmarc`,
    {
      schema: {
        summary: "A domain's mail by source over a period (default: the last 30 days), from its DMARC reports, Mailroom's own sources told apart",
        params: IdParams,
        querystring: Type.Object(Period),
        response: { 200: Summary },
      },
    },
    async (request) => dmarc.summarizeDomain(ctx, projectOf(request), request.params.id, request.query),
  );
}
