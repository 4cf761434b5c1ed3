import type { SourceTotals } from '../../store/dmarc-reports.ts';
import type { ReportRow } from './aggregate-report.ts';
import type { IsOurs } from './our-sources.ts';

// A summary of sources: messages by source address with pass and fail for SPF, DKIM and DMARC's
// alignment, and whether the source is Mailroom's. The same shape for a period (GET /domains/:id/dmarc,
// the deliverability check) and for one report (the domain.dmarc_report event).

export interface SourceSummary {
  source_ip: string;
  ours: boolean;
  messages: number;
  spf: { pass: number; fail: number };
  dkim: { pass: number; fail: number };
  /** DMARC: DKIM or SPF passed aligned with From. */
  alignment: { pass: number; fail: number };
}

/** One report's rows as totals by source. */
export function totalsOf(rows: ReportRow[]): SourceTotals[] {
  const bySource = new Map<string, SourceTotals>();
  for (const row of rows) {
    const totals = bySource.get(row.source_ip) ?? { source_ip: row.source_ip, messages: 0, spf_pass: 0, dkim_pass: 0, aligned_pass: 0 };
    totals.messages += row.count;
    if (row.spf === 'pass') totals.spf_pass += row.count;
    if (row.dkim === 'pass') totals.dkim_pass += row.count;
    if (row.dkim_aligned === 'pass' || row.spf_aligned === 'pass') totals.aligned_pass += row.count;
    bySource.set(row.source_ip, totals);
  }
  return [...bySource.values()].sort((a, b) => b.messages - a.messages || a.source_ip.localeCompare(b.source_ip));
}

export async function summarize(totals: SourceTotals[], isOurs: IsOurs): Promise<SourceSummary[]> {
  const split = (pass: number, all: number) => ({ pass, fail: all - pass });
  return Promise.all(
    totals.map(async (t) => ({
      source_ip: t.source_ip,
      ours: await isOurs(t.source_ip),
      messages: t.messages,
      spf: split(t.spf_pass, t.messages),
      dkim: split(t.dkim_pass, t.messages),
      alignment: split(t.aligned_pass, t.messages),
    })),
  );
}

/** The sources that are not Mailroom's and send as the domain with DMARC failing: someone else, or a service not set up. */
export const strangers = (sources: SourceSummary[]) => sources.filter((s) => !s.ours && s.alignment.fail > 0);
