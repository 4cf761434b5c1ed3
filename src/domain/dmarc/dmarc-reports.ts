import type { Context } from '../../context.ts';
import { invalidField, notFound } from '../../errors.ts';
import * as store from '../../store/dmarc-reports.ts';
import { findDomain } from '../../store/domains.ts';
import type { PageRequest } from '../../store/paginate.ts';
import { toTimestamp } from '../../time/clock.ts';
import { isUuid } from '../../time/ids.ts';
import type { AggregateReport, AuthResults } from './aggregate-report.ts';
import { oursFor } from './our-sources.ts';
import { summarize } from './source-summary.ts';

// Mailroom's DMARC routes: the reports read (GET /dmarc/reports, /dmarc/reports/:id) and a domain's
// sources over a period (GET /domains/:id/dmarc).

/** The period a summary covers when none is given. */
export const SUMMARY_DAYS = 30;
const DAY = 86_400_000;

export interface PeriodParams {
  from?: string;
  to?: string;
}

/** A date parameter (an ISO 8601 date or time, or a timestamp of ours) as a timestamp; 422 naming it otherwise. */
function dateOf(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value.replace(/^(\d{4}-\d\d-\d\d) /, '$1T').replace(/\+00$/, 'Z'));
  if (Number.isNaN(ms)) throw invalidField(field, 'expected a date such as 2026-01-31 or 2026-01-31T12:00:00Z.');
  return ms;
}

function periodOf(params: PeriodParams, defaults?: { now: number }): { from?: number; to?: number } {
  const to = dateOf(params.to, 'to') ?? defaults?.now;
  const from = dateOf(params.from, 'from') ?? (defaults && to! - SUMMARY_DAYS * DAY);
  if (from !== undefined && to !== undefined && from >= to) throw invalidField('from', 'must be before `to`.');
  return { from, to };
}

const metadata = ({ policy, ...row }: store.DmarcReportRow) => ({ object: 'dmarc_report' as const, ...row, policy: JSON.parse(policy) as AggregateReport['policy'] });

/** GET /dmarc/reports: newest first, those of a domain and of reports meeting a period when asked. */
export async function listDmarcReports(ctx: Context, project: string, params: PeriodParams & { domain_id?: string }, page: PageRequest) {
  if (params.domain_id !== undefined && !isUuid(params.domain_id)) throw invalidField('domain_id', 'must be a domain id.');
  const { from, to } = periodOf(params);
  const filter = { project, domainId: params.domain_id?.toLowerCase(), from: from === undefined ? undefined : toTimestamp(from), to: to === undefined ? undefined : toTimestamp(to) };
  const result = await store.listDmarcReports(ctx.db, filter, page);
  return { has_more: result.has_more, data: result.data.map(metadata) };
}

/** GET /dmarc/reports/:id: the report and its rows. */
export async function getDmarcReport(ctx: Context, project: string, id: string) {
  const row = await store.findDmarcReport(ctx.db, project, id.toLowerCase());
  if (!row) throw notFound('DMARC report');
  const rows = await store.findDmarcRows(ctx.db, row.id);
  return {
    ...metadata(row),
    rows: rows.map(({ dmarc_report_id: _report, position: _position, auth_results, ...r }) => ({ ...r, auth_results: JSON.parse(auth_results) as AuthResults })),
  };
}

/** GET /domains/:id/dmarc: its sources over a period (the last 30 days by default), Mailroom's own told apart. */
export async function summarizeDomain(ctx: Context, project: string, id: string, params: PeriodParams) {
  const domain = await findDomain(ctx.db, project, id);
  if (!domain) throw notFound('Domain');
  const now = ctx.clock.now();
  const { from, to } = periodOf(params, { now });
  const totals = await store.sumDmarcSources(ctx.db, domain.id, toTimestamp(from!), toTimestamp(to!));
  const sources = await summarize(totals.sources, await oursFor(ctx, domain, now));
  return {
    object: 'dmarc_summary' as const,
    domain_id: domain.id,
    name: domain.name,
    from: toTimestamp(from!),
    to: toTimestamp(to!),
    reports: totals.reports,
    messages: sources.reduce((sum, s) => sum + s.messages, 0),
    sources,
  };
}

/** A domain's messages passing and failing DMARC per UTC day over the last `days` days (today the last), from its reports: every day, 0 when none reported. */
export async function dmarcPerDay(ctx: Context, project: string, id: string, days = SUMMARY_DAYS): Promise<{ day: string; pass: number; fail: number }[]> {
  const domain = await findDomain(ctx.db, project, id);
  if (!domain) throw notFound('Domain');
  const now = ctx.clock.now();
  const first = Date.parse(new Date(now - (days - 1) * DAY).toISOString().slice(0, 10));
  const counted = new Map((await store.sumDmarcDays(ctx.db, domain.id, toTimestamp(first), toTimestamp(first + days * DAY))).map((d) => [d.day, d]));
  return Array.from({ length: days }, (_, i) => {
    const day = new Date(first + i * DAY).toISOString().slice(0, 10);
    return counted.get(day) ?? { day, pass: 0, fail: 0 };
  });
}
