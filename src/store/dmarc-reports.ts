import { sql } from 'kysely';
import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import { selectPage, type PageRequest } from './paginate.ts';
import type { DmarcReportRowTable, DmarcReportTable } from './schema.ts';

/** A report as the code uses it: counts as numbers (PostgreSQL gives a bigint as text). */
export interface DmarcReportRow extends Omit<DmarcReportTable, 'messages'> {
  messages: number;
}

export interface DmarcRowRow extends Omit<DmarcReportRowTable, 'count'> {
  count: number;
}

const report = (row: DmarcReportTable): DmarcReportRow => ({ ...row, messages: Number(row.messages) });

/** Inserts a report and its rows; false (nothing written) when one of the same org_name and report_id exists. */
export async function insertDmarcReport(tx: Tx, row: DmarcReportRow, rows: DmarcRowRow[]): Promise<boolean> {
  const result = await tx
    .insertInto('dmarc_reports')
    .values(row)
    .onConflict((oc) => oc.columns(['org_name', 'report_id']).doNothing())
    .executeTakeFirst();
  if ((result.numInsertedOrUpdatedRows ?? 0n) === 0n) return false;
  await insertRows(tx, 'dmarc_report_rows', rows);
  return true;
}

export interface ReportFilter {
  project: string;
  domainId?: string;
  /** Reports whose period ends after this timestamp... */
  from?: string;
  /** ...and begins before this one. */
  to?: string;
}

/** Reports newest first (by id: the order they arrived), those of a domain and period when asked. */
export async function listDmarcReports(db: Db, filter: ReportFilter, page: PageRequest) {
  let query = db.selectFrom('dmarc_reports').selectAll().where('project_id', '=', filter.project);
  if (filter.domainId) query = query.where('domain_id', '=', filter.domainId);
  if (filter.from) query = query.where('date_end', '>', filter.from);
  if (filter.to) query = query.where('date_begin', '<', filter.to);
  const result = await selectPage(query, 'id', page);
  return { has_more: result.has_more, data: result.data.map(report) };
}

export async function findDmarcReport(db: Db, project: string, id: string): Promise<DmarcReportRow | undefined> {
  const row = await db.selectFrom('dmarc_reports').selectAll().where('project_id', '=', project).where('id', '=', id).executeTakeFirst();
  return row && report(row);
}

/** A report's rows, in the report's order. */
export async function findDmarcRows(db: Db, reportId: string): Promise<DmarcRowRow[]> {
  const rows = await db.selectFrom('dmarc_report_rows').selectAll().where('dmarc_report_id', '=', reportId).orderBy('position').execute();
  return rows.map((row) => ({ ...row, count: Number(row.count) }));
}

/** Messages by source over a domain's reports of a period, each outcome counted in messages. */
export interface SourceTotals {
  source_ip: string;
  messages: number;
  spf_pass: number;
  dkim_pass: number;
  /** DMARC passed: DKIM or SPF passed aligned with From. */
  aligned_pass: number;
}

/** The totals of each source over the reports of `domainId` whose period meets [from, to), most messages first. */
export async function sumDmarcSources(db: Db, domainId: string, from: string, to: string): Promise<{ reports: number; sources: SourceTotals[] }> {
  const reports = db.selectFrom('dmarc_reports').where('domain_id', '=', domainId).where('date_end', '>', from).where('date_begin', '<', to);
  const counted = await reports.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
  const rows = await db
    .selectFrom('dmarc_report_rows')
    .where('dmarc_report_id', 'in', reports.select('id'))
    .select((eb) => {
      const when = (condition: ReturnType<typeof eb.or>) => eb.fn.sum<number | string>(eb.case().when(condition).then(eb.ref('count')).else(0).end());
      return [
        'source_ip',
        eb.fn.sum<number | string>('count').as('messages'),
        when(eb.or([eb('spf', '=', 'pass')])).as('spf_pass'),
        when(eb.or([eb('dkim', '=', 'pass')])).as('dkim_pass'),
        when(eb.or([eb('dkim_aligned', '=', 'pass'), eb('spf_aligned', '=', 'pass')])).as('aligned_pass'),
      ];
    })
    .groupBy('source_ip')
    .execute();
  const sources = rows.map((r) => ({
    source_ip: r.source_ip,
    messages: Number(r.messages),
    spf_pass: Number(r.spf_pass),
    dkim_pass: Number(r.dkim_pass),
    aligned_pass: Number(r.aligned_pass),
  }));
  sources.sort((a, b) => b.messages - a.messages || a.source_ip.localeCompare(b.source_ip));
  return { reports: Number(counted.n), sources };
}

/** The ids of the domains that take their reports at `address` (lower case). */
export async function findDomainsReportingTo(db: Db, address: string): Promise<string[]> {
  const rows = await db.selectFrom('domains').select('id').where('dmarc_report_address', '=', address).execute();
  return rows.map((row) => row.id);
}

/** Messages passing and failing DMARC on each UTC day (a report's day: that of its period's start) of `domainId`'s reports in [from, to), by day. */
export async function sumDmarcDays(db: Db, domainId: string, from: string, to: string): Promise<{ day: string; pass: number; fail: number }[]> {
  const day = sql<string>`substr(dmarc_reports.date_begin, 1, 10)`;
  const rows = await db
    .selectFrom('dmarc_report_rows')
    .innerJoin('dmarc_reports', 'dmarc_reports.id', 'dmarc_report_rows.dmarc_report_id')
    .where('dmarc_reports.domain_id', '=', domainId)
    .where('dmarc_reports.date_begin', '>=', from)
    .where('dmarc_reports.date_begin', '<', to)
    .select((eb) => [
      day.as('day'),
      eb.fn
        .sum<number | string>(eb.case().when(eb.or([eb('dkim_aligned', '=', 'pass'), eb('spf_aligned', '=', 'pass')])).then(eb.ref('count')).else(0).end())
        .as('pass'),
      eb.fn.sum<number | string>('count').as('messages'),
    ])
    .groupBy(day)
    .orderBy(day)
    .execute();
  return rows.map((r) => ({ day: r.day, pass: Number(r.pass), fail: Number(r.messages) - Number(r.pass) }));
}
