import type { Context } from '../../context.ts';
import { findStsModes } from '../../store/mta-sts-policies.ts';
import { findTlsReports, sumTlsSessions } from '../../store/tls-reports.ts';

// What direct delivery's TLS sessions came to per recipient domain (the counts of the TLS reports,
// session-counts.ts), with the MTA-STS policy in force and each day's report: the dashboard's TLS page.

const DAY = 86_400_000;

export interface TlsDay {
  day: string;
  successful: number;
  failed: number;
  /** The report made for the day: where it went (`none published` when the domain asks for none). */
  report: { rua: string; created_at: string } | null;
}

export interface TlsDomainFigures {
  domain: string;
  /** The MTA-STS policy kept for the domain, if one is. */
  policy: { mode: string; expires_at: number } | null;
  successful: number;
  failed: number;
  /** Failed sessions by RFC 8460 result type. */
  failures: Record<string, number>;
  days: TlsDay[];
}

/** The last `days` UTC days (today included) of the `limit` recipient domains with the most sessions; whether more had some. */
export async function tlsFigures(ctx: Context, days: number, limit: number): Promise<{ counting: boolean; has_more: boolean; domains: TlsDomainFigures[] }> {
  const fromDay = new Date(ctx.clock.now() - (days - 1) * DAY).toISOString().slice(0, 10);
  const rows = await sumTlsSessions(ctx.db, fromDay, limit + 1);
  const byDomain = new Map<string, TlsDomainFigures>();
  for (const row of rows) {
    let figures = byDomain.get(row.domain);
    if (!figures) byDomain.set(row.domain, (figures = { domain: row.domain, policy: null, successful: 0, failed: 0, failures: {}, days: [] }));
    let day = figures.days.at(-1);
    if (day?.day !== row.day) figures.days.push((day = { day: row.day, successful: 0, failed: 0, report: null }));
    if (row.result === 'success') {
      figures.successful += row.sessions;
      day.successful += row.sessions;
    } else {
      figures.failed += row.sessions;
      day.failed += row.sessions;
      figures.failures[row.result] = (figures.failures[row.result] ?? 0) + row.sessions;
    }
  }
  const ranked = [...byDomain.values()].sort((a, b) => b.successful + b.failed - (a.successful + a.failed) || a.domain.localeCompare(b.domain));
  const shown = ranked.slice(0, limit);
  const names = shown.map((d) => d.domain);
  const reports = new Map((await findTlsReports(ctx.db, fromDay, names)).map((r) => [`${r.domain} ${r.day}`, { rua: r.rua, created_at: r.created_at }]));
  const policies = new Map((await findStsModes(ctx.db, names)).map((p) => [p.domain, { mode: p.mode, expires_at: p.expires_at }]));
  for (const figures of shown) {
    figures.policy = policies.get(figures.domain) ?? null;
    for (const day of figures.days) day.report = reports.get(`${figures.domain} ${day.day}`) ?? null;
  }
  const counting = ctx.config.deliveryMode === 'direct' && ctx.config.tlsRpt.enabled;
  return { counting, has_more: ranked.length > limit, domains: shown };
}
