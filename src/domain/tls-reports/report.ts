import type { StsPolicy } from '../../delivery/mta-sts-policy.ts';
import type { TlsSessionCountTable } from '../../store/schema.ts';

// A TLS report (RFC 8460 4.4): one recipient domain's sessions of one UTC day under its MTA-STS policy,
// the successes summed, the failures by result type, MX host and address.

export interface ReportInput {
  organization: string;
  contact: string;
  reportId: string;
  /** `YYYY-MM-DD`, UTC. */
  day: string;
  domain: string;
  /** The policy kept for the domain, if one was ever had. */
  policy: StsPolicy | undefined;
  counts: Pick<TlsSessionCountTable, 'result' | 'mx_host' | 'receiving_ip' | 'count' | 'reason'>[];
  /** This server's sending address, when configured (MAILROOM_SENDING_IPS). */
  sendingIp: string | undefined;
}

/** The day's start and the next day's, epoch ms. */
export function dayRange(day: string): [number, number] {
  const start = Date.parse(`${day}T00:00:00Z`);
  return [start, start + 86_400_000];
}

/** The report's JSON object. */
export function tlsReport(input: ReportInput): object {
  const [start, end] = dayRange(input.day);
  const failures = input.counts.filter((c) => c.result !== 'success');
  const sum = (rows: ReportInput['counts']) => rows.reduce((total, row) => total + Number(row.count), 0);
  const { policy } = input;
  return {
    'organization-name': input.organization,
    'date-range': { 'start-datetime': new Date(start).toISOString().replace('.000', ''), 'end-datetime': new Date(end).toISOString().replace('.000', '') },
    'contact-info': input.contact,
    'report-id': input.reportId,
    policies: [
      {
        policy: {
          'policy-type': 'sts',
          ...(policy ? { 'policy-string': policy.text } : {}),
          'policy-domain': input.domain,
          ...(policy ? { 'mx-host': policy.mx } : {}),
        },
        summary: { 'total-successful-session-count': sum(input.counts.filter((c) => c.result === 'success')), 'total-failure-session-count': sum(failures) },
        ...(failures.length > 0
          ? {
              'failure-details': failures.map((row) => ({
                'result-type': row.result,
                ...(input.sendingIp ? { 'sending-mta-ip': input.sendingIp } : {}),
                ...(row.mx_host ? { 'receiving-mx-hostname': row.mx_host } : {}),
                ...(row.receiving_ip ? { 'receiving-ip': row.receiving_ip } : {}),
                'failed-session-count': Number(row.count),
                ...(row.reason ? { 'failure-reason-code': row.reason } : {}),
              })),
            }
          : {}),
      },
    ],
  };
}
