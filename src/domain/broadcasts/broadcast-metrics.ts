import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import { countBroadcastEmails, listClickedLinks } from '../../store/broadcast-reports.ts';
import { findBroadcast } from '../../store/broadcasts.ts';
import { sumMetrics } from '../../store/email-metrics.ts';
import type { CountMetric } from '../metrics/metric-names.ts';
import { emailMetrics } from '../metrics/metrics.ts';
import type { MetricsParams } from '../metrics/metrics-query.ts';

// Resend's broadcast metrics, from the counts Mailroom keeps: the rollup by broadcast (bots count
// nowhere; opens and clicks once per recipient) and the broadcast's emails, one per recipient.

/** The links GET /broadcasts/:id/metrics shows; /clicked-links pages through them all. */
export const METRICS_LINKS = 100;

/** Each count Resend shows with a percentage, and what it is a percentage of (the rates of GET /emails/metrics). */
const SHARES = {
  delivered: ['delivered', 'sent'],
  opened: ['unique_opened', 'delivered'],
  clicked: ['unique_clicked', 'delivered'],
  unsubscribed: ['unsubscribed', 'delivered'],
  bounced: ['bounced', 'sent'],
  complained: ['complained', 'delivered'],
  suppressed: ['suppressed', 'total'],
} as const satisfies Record<string, readonly [CountMetric, CountMetric | 'total']>;

type Share = { total: number; percentage: number };

/** A percentage with two decimals (12.34 is 12.34%); 0 when the whole is. */
const percentage = (part: number, whole: number) => (whole === 0 ? 0 : Math.round((part / whole) * 10_000) / 100);

/** GET /broadcasts/:id/metrics: its recipients, how many were sent and remain, what they did, and its links. */
export async function getBroadcastMetrics(ctx: Context, project: string, id: string) {
  const broadcast = await findBroadcast(ctx.db, project, id.toLowerCase());
  if (!broadcast) throw notFound('Broadcast');
  const metrics: CountMetric[] = ['sent', 'delivered', 'unique_opened', 'unique_clicked', 'unsubscribed', 'bounced', 'complained', 'suppressed', 'failed'];
  const [total, sums, links] = await Promise.all([
    countBroadcastEmails(ctx.db, broadcast.id),
    sumMetrics(ctx.db, { project, from: 0, to: Number.MAX_SAFE_INTEGER, broadcastIds: [broadcast.id], metrics }, { slot: false, domain: false, broadcast: false }),
    listClickedLinks(ctx.db, broadcast.id, { limit: METRICS_LINKS }),
  ]);
  // The rollup and its unfolded increments may each hold part of a count.
  const counts: Record<string, number> = { total };
  for (const sum of sums) counts[sum.metric] = (counts[sum.metric] ?? 0) + sum.count;
  const count = (name: string) => counts[name] ?? 0;
  const shares = Object.fromEntries(
    Object.entries(SHARES).map(([name, [part, whole]]): [string, Share] => [name, { total: count(part), percentage: percentage(count(part), count(whole)) }]),
  ) as Record<keyof typeof SHARES, Share>;
  return {
    object: 'broadcast_metrics' as const,
    broadcast_id: broadcast.id,
    status: broadcast.status,
    total,
    sent: count('sent'),
    // Neither sent nor ended otherwise (suppressed, failed): still to go.
    remaining: Math.max(0, total - count('sent') - count('suppressed') - count('failed')),
    ...shares,
    clicked_links: links.data.map((link) => ({
      url: link.url,
      clicks: link.clicks,
      unique_clicks: link.unique_clicks,
      percentage: percentage(link.unique_clicks, count('delivered')),
    })),
  };
}

/** GET /broadcasts/metrics: GET /emails/metrics over the emails of broadcasts, each row's broadcast as `id` and `name`. */
export async function broadcastsMetrics(ctx: Context, project: string, params: Omit<MetricsParams, 'domain_id' | 'email_id'>) {
  const { data, ...answer } = await emailMetrics(ctx, project, params, { broadcastsOnly: true });
  if (!data) return answer;
  return {
    ...answer,
    data: data.map(({ broadcast_id, broadcast_name, ...row }) => ({
      ...(row.period === undefined ? {} : { period: row.period }),
      ...(broadcast_id === undefined ? {} : { id: broadcast_id, name: broadcast_name }),
      ...row,
    })),
  };
}
