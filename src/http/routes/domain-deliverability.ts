import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as deliverability from '../../domain/deliverability/deliverability.ts';
import { projectOf } from '../auth.ts';
import { IdParams, UUID } from '../schemas/common.ts';

// Mailroom's own: why a domain's mail would land in spam, and how to fix it (docs/deliverability.md).

const Status = Type.Union([Type.Literal('pass'), Type.Literal('warn'), Type.Literal('fail')]);

const Check = Type.Object({
  id: Type.String({ description: 'spf, dkim, dmarc, alignment, return_path, ptr, fcrdns, blocklists, mta_sts, tls_rpt, bulk_sender, bounce_rate, complaint_rate or dmarc_reports' }),
  status: Status,
  detail: Type.String({ description: 'What was found' }),
  fix: Type.Union([Type.String(), Type.Null()], { description: 'What to change, with the exact DNS record to publish where one is missing; null when it passes' }),
  spf_lookups: Type.Optional(Type.Integer({ description: 'spf: the DNS lookups the record needs (receivers stop at 10)' })),
});

const Deliverability = Type.Object({
  object: Type.Literal('deliverability'),
  domain_id: Type.String(),
  name: Type.String(),
  checked_at: Type.String(),
  status: Status,
  checks: Type.Array(Check),
});

const path = `/domains/:id${UUID}/deliverability`;

export function domainDeliverabilityRoutes(app: App, ctx: Context): void {
  app.get(
    path,
    { schema: { summary: "A domain's last deliverability check, each check with its fix (checked now if never checked)", params: IdParams, response: { 200: Deliverability } } },
    async (request) => deliverability.getDeliverability(ctx, projectOf(request), request.params.id),
  );

  app.post(
    path,
    { schema: { summary: "Check a domain's deliverability now: DNS records, reverse DNS, blocklists and its last 7 days' rates", params: IdParams, response: { 200: Deliverability } } },
    async (request) => deliverability.checkDeliverability(ctx, projectOf(request), request.params.id),
  );
}
