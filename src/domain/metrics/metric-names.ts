import { bounceOf } from '../outcomes/outcomes.ts';

// The metrics of GET /emails/metrics, and the one rule that says which counts an event raises: the
// rollup (rollup.ts), the per-email reading (metrics.ts) and the benchmark's data all go through eventMetrics.

/** The counts, each a number of event rows (one per recipient). */
export const COUNT_METRICS = [
  'received',
  'delivered',
  'complained',
  'suppressed',
  'bounced',
  'bounced_transient',
  'bounced_permanent',
  'bounced_undetermined',
  'opened',
  'clicked',
  'unsubscribed',
  'delivery_delayed',
  'failed',
  'sent',
  'unique_opened',
  'unique_clicked',
] as const;

export type CountMetric = (typeof COUNT_METRICS)[number];

/** Each rate as numerator / denominator, from the same counts. */
export const RATE_METRICS = {
  delivery_rate: ['delivered', 'sent'],
  open_rate: ['unique_opened', 'delivered'],
  click_rate: ['unique_clicked', 'delivered'],
  bounce_rate: ['bounced', 'sent'],
  complaint_rate: ['complained', 'delivered'],
  unsubscribe_rate: ['unsubscribed', 'delivered'],
} as const satisfies Record<string, readonly [CountMetric, CountMetric]>;

export type RateMetric = keyof typeof RATE_METRICS;
export type Metric = CountMetric | RateMetric;

/** Every metric, in the order of Resend's list (the default, and the order of a response's fields). */
export const METRICS: readonly Metric[] = [...COUNT_METRICS, ...(Object.keys(RATE_METRICS) as RateMetric[])];

/** The event types that count once per state, under their own name. */
const PLAIN = new Set(['sent', 'delivered', 'delivery_delayed', 'complained', 'suppressed', 'failed', 'unsubscribed', 'received']);

/** What an event is, for counting: its type, its answer (a bounce's type is read from it), and whether a bot made it. */
export interface CountedEvent {
  type: string;
  response: string | null;
  bot: number;
}

/**
 * The counts one event raises. `first`: this is the recipient's first open (or click) not made by a
 * bot, which also counts as unique. A bot's event counts nowhere; queued, scheduled and canceled neither.
 */
export function eventMetrics(event: CountedEvent, first: boolean): CountMetric[] {
  if (event.bot) return [];
  if (PLAIN.has(event.type)) return [event.type as CountMetric];
  if (event.type === 'bounced') return ['bounced', `bounced_${bounceOf(event.response ?? '').type.toLowerCase()}` as CountMetric];
  if (event.type === 'opened' || event.type === 'clicked') return first ? [event.type, `unique_${event.type}`] : [event.type];
  return [];
}

/** Whether an event of this type can be a recipient's first (unique) one. */
export const countsUnique = (type: string): type is 'opened' | 'clicked' => type === 'opened' || type === 'clicked';

/** A rate rounded to four decimals (0.1234 is 12.34%); 0 when its denominator is. */
export function rate(numerator: number, denominator: number): number {
  return denominator === 0 ? 0 : Math.round((numerator / denominator) * 10_000) / 10_000;
}
