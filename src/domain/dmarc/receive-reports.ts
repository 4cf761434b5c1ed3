import type { Context } from '../../context.ts';
import { AppError, clip } from '../../errors.ts';
import { findDomainsReportingTo, insertDmarcReport, type DmarcReportRow } from '../../store/dmarc-reports.ts';
import { isoTime, toTimestamp } from '../../time/clock.ts';
import { newId } from '../../time/ids.ts';
import { logEvents } from '../events/event-log.ts';
import type { AggregateReport } from './aggregate-report.ts';
import { oursFor } from './our-sources.ts';
import { strangers, summarize, totalsOf } from './source-summary.ts';

// Mail to a domain's DMARC report address (PATCH /domains/:id {dmarc_reports}): its reports read on the
// reader thread, each stored once, before the inbound server answers 250. A message that holds no report
// file is not taken here: the server keeps it as received mail, so that nothing it accepted is lost.

/** Whether mail to `address` is read for reports: some domain takes its reports there. */
export async function isReportAddress(ctx: Context, address: string): Promise<boolean> {
  return (await findDomainsReportingTo(ctx.db, address.toLowerCase())).length > 0;
}

/**
 * Reads and stores the reports of a message to the report addresses `to`; false when it holds none.
 * A message whose every report file is refused (past a cap, a DTD, malformed) is refused for good
 * (554 5.6.0 with the reason); the files refused beside readable ones are logged.
 */
export async function receiveDmarcReports(ctx: Context, raw: Buffer, to: string[]): Promise<boolean> {
  const { reports, refused } = await ctx.reader.dmarc(raw);
  for (const why of refused) ctx.log.warn({ to }, `DMARC report file refused: ${why}`);
  if (reports.length === 0 && refused.length === 0) return false;
  if (reports.length === 0) throw new AppError('validation_error', `The DMARC report cannot be read: ${clip(refused[0]!)}`);
  const addresses = new Set(to.map((address) => address.toLowerCase()));
  for (const report of reports) await storeReport(ctx, report, addresses);
  return true;
}

/** Stores one report, with its domain.dmarc_report event when a source not ours fails DMARC as the domain. */
async function storeReport(ctx: Context, report: AggregateReport, addresses: Set<string>): Promise<void> {
  const about = { org_name: report.org_name, report_id: report.report_id, domain: report.domain };
  const domain = await ctx.domains.find(report.domain);
  if (!domain?.dmarc_report_address || !addresses.has(domain.dmarc_report_address)) {
    return void ctx.log.info(about, 'DMARC report ignored: its domain is none of ours that takes its reports at this address');
  }
  const at = toTimestamp(ctx.clock.now());
  const row: DmarcReportRow = {
    id: newId(),
    project_id: domain.project_id,
    domain_id: domain.id,
    domain: report.domain,
    org_name: report.org_name,
    email: report.email,
    report_id: report.report_id,
    date_begin: toTimestamp(report.date_begin),
    date_end: toTimestamp(report.date_end),
    policy: JSON.stringify(report.policy),
    messages: report.rows.reduce((sum, r) => sum + r.count, 0),
    row_count: report.rows.length,
    received_at: at,
  };
  const rows = report.rows.map((r, position) => ({ ...r, dmarc_report_id: row.id, position, auth_results: JSON.stringify(r.auth_results) }));
  const sources = await summarize(totalsOf(report.rows), await oursFor(ctx, domain, ctx.clock.now()));
  const alarming = strangers(sources).length > 0;
  const data = {
    domain_id: domain.id,
    name: domain.name,
    report: { id: row.id, org_name: row.org_name, report_id: row.report_id, date_begin: isoTime(row.date_begin), date_end: isoTime(row.date_end) },
    messages: row.messages,
    sources,
  };
  const stored = await ctx.writer.transaction(async (tx) => {
    if (!(await insertDmarcReport(tx, row, rows))) return false;
    if (alarming) await logEvents(ctx, tx, [{ project: domain.project_id, type: 'domain.dmarc_report', data }], at);
    return true;
  });
  ctx.log.info(about, stored ? 'DMARC report stored' : 'DMARC report ignored: stored already');
}
