import type { Context } from '../../context.ts';
import { sumMetrics } from '../../store/email-metrics.ts';
import { slotOf, SLOT_MS } from '../metrics/rollup.ts';
import { checkOf, percent, type DeliverabilityCheck, type Finding } from './check.ts';

// `bounce_rate`, `complaint_rate` and `bulk_sender`, from Mailroom's own record of the domain's mail
// over the last 7 days: the metrics rollup, by sender domain. The rates are those of GET /emails/metrics
// (bounced / sent, complained / delivered); the thresholds are Gmail's and Yahoo's published ones.

export const RATE_DAYS = 7;

export const BOUNCE_WARN = 0.02;
export const BOUNCE_FAIL = 0.04;
/** Gmail asks bulk senders to stay under 0.1%, and never to reach 0.3%. */
export const COMPLAINT_WARN = 0.001;
export const COMPLAINT_FAIL = 0.003;

export interface SendingRecord {
  sent: number;
  delivered: number;
  bounced: number;
  complained: number;
  /** Messages of broadcasts sent. */
  broadcastSent: number;
}

/** What the domain's mail did in its project from `since` (the last 7 days by default; the rollup's 15-minute slots) up to `now`. */
export async function sendingRecord(ctx: Context, domain: { project_id: string; name: string }, now: number, since = now - RATE_DAYS * 86_400_000): Promise<SendingRecord> {
  const { project_id: project, name } = domain;
  const scope = { project, from: slotOf(since), to: slotOf(now) + SLOT_MS, domains: [name], metrics: ['sent', 'delivered', 'bounced', 'complained'] };
  const sums = await sumMetrics(ctx.db, scope, { slot: false, domain: false, broadcast: true });
  const record: SendingRecord = { sent: 0, delivered: 0, bounced: 0, complained: 0, broadcastSent: 0 };
  for (const sum of sums) {
    const count = Number(sum.count);
    record[sum.metric as 'sent' | 'delivered' | 'bounced' | 'complained'] += count;
    if (sum.metric === 'sent' && sum.broadcast_id) record.broadcastSent += count;
  }
  return record;
}

export const ratio = (numerator: number, denominator: number) => (denominator === 0 ? 0 : numerator / denominator);

/** A rate against its thresholds: above `fail` fails, above `warn` warns. */
function rateFinding(value: number, warn: number, fail: number, said: string, fix: string): Finding {
  if (value > fail) return { status: 'fail', detail: `${said}, above ${percent(fail)}.`, fix };
  if (value > warn) return { status: 'warn', detail: `${said}, above ${percent(warn)}.`, fix };
  return { status: 'pass', detail: `${said}.` };
}

export function checkBounceRate(name: string, record: SendingRecord): DeliverabilityCheck {
  if (record.sent === 0) return checkOf('bounce_rate', [], `Nothing was sent from ${name} in the last ${RATE_DAYS} days.`);
  const value = ratio(record.bounced, record.sent);
  const said = `${record.bounced} of ${record.sent} messages sent from ${name} in the last ${RATE_DAYS} days bounced: ${percent(value)}`;
  const fix = 'Send only to addresses that asked for your mail (confirmed opt-in), stop sending to old lists, and let the suppression list keep addresses that bounced.';
  return checkOf('bounce_rate', [rateFinding(value, BOUNCE_WARN, BOUNCE_FAIL, said, fix)], '');
}

export function checkComplaintRate(name: string, record: SendingRecord): DeliverabilityCheck {
  if (record.delivered === 0) return checkOf('complaint_rate', [], `Nothing was delivered from ${name} in the last ${RATE_DAYS} days.`);
  const value = ratio(record.complained, record.delivered);
  const said = `${record.complained} of ${record.delivered} messages delivered from ${name} in the last ${RATE_DAYS} days were marked as spam: ${percent(value)}`;
  const fix = 'Send only what recipients asked for, say who you are in the From name and subject, and make unsubscribing easy (one-click on broadcasts).';
  return checkOf('complaint_rate', [rateFinding(value, COMPLAINT_WARN, COMPLAINT_FAIL, said, fix)], '');
}

/**
 * bulk_sender: Gmail's and Yahoo's rules for senders of 5,000 messages a day: SPF, DKIM and DMARC in
 * place, one-click unsubscribe on every broadcast (RFC 8058: an https link, so MAILROOM_PUBLIC_URL must
 * be https), complaints under 0.3%.
 */
export function checkBulkSender(name: string, publicUrl: string, record: SendingRecord, authentication: DeliverabilityCheck[]): DeliverabilityCheck {
  const findings: Finding[] = [];
  const missing = authentication.filter((check) => check.status === 'fail').map((check) => check.id);
  if (missing.length > 0) findings.push({ status: 'fail', detail: `Not in place: ${missing.join(', ')}.`, fix: `Fix the ${missing.join(', ')} ${missing.length === 1 ? 'check' : 'checks'}.` });
  if (!publicUrl.startsWith('https://')) {
    const https = 'Serve Mailroom over https and set MAILROOM_PUBLIC_URL to that address.';
    if (record.broadcastSent > 0) {
      const messages = `${record.broadcastSent} broadcast ${record.broadcastSent === 1 ? 'message' : 'messages'}`;
      findings.push({ status: 'fail', detail: `${messages} in the last ${RATE_DAYS} days had one-click unsubscribe links over http (MAILROOM_PUBLIC_URL is ${publicUrl}); providers honour one-click over https only.`, fix: https });
    } else {
      findings.push({ status: 'warn', detail: `Broadcasts would have one-click unsubscribe links over http (MAILROOM_PUBLIC_URL is ${publicUrl}); providers honour one-click over https only.`, fix: https });
    }
  }
  const complaints = ratio(record.complained, record.delivered);
  const said = `Complaints over the last ${RATE_DAYS} days: ${percent(complaints)}`;
  findings.push(rateFinding(complaints, COMPLAINT_WARN, COMPLAINT_FAIL, said, 'Bring complaints under 0.1% (see complaint_rate).'));
  return checkOf('bulk_sender', findings, `SPF, DKIM and DMARC are in place and every broadcast carries one-click unsubscribe over https.`);
}
