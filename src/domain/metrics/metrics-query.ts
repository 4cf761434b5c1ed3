import { AppError, quoted } from '../../errors.ts';
import { METRICS, type Metric } from './metric-names.ts';
import { GRANULARITIES, MAX_PERIODS, periodStarts, slotRange, zoneOf, type Granularity, type SlotRange, type Zone } from './periods.ts';

// GET /emails/metrics's parameters, read and checked: every mistake is a 422 that names it.

export const DIMENSIONS = ['period', 'domain', 'email', 'broadcast'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** The most ids each of domain_id, email_id and broadcast_id takes. */
export const MAX_IDS = 100;

/** The parameters as they come: each list a comma-separated value, repeated, or both. */
export interface MetricsParams {
  start_date?: string;
  end_date?: string;
  timezone?: string;
  granularity?: string;
  metrics?: string | string[];
  dimensions?: string | string[];
  domain_id?: string | string[];
  email_id?: string | string[];
  broadcast_id?: string | string[];
}

export interface MetricsQuery {
  range: SlotRange;
  zone: Zone;
  granularity: Granularity;
  /** The starts of the range's periods, in order. */
  periods: number[];
  metrics: Metric[];
  dimensions: Dimension[];
  domainIds?: string[];
  emailIds?: string[];
  broadcastIds?: string[];
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const invalid = (message: string) => new AppError('validation_error', message);

/** A list parameter's values, once each, in the order first given. */
function listOf(value: string | string[] | undefined): string[] | undefined {
  if (value === undefined) return undefined;
  const values = [value].flat().flatMap((part) => part.split(',')).map((part) => part.trim()).filter((part) => part !== '');
  return [...new Set(values)];
}

function namesOf<T extends string>(field: string, value: string | string[] | undefined, allowed: readonly T[]): T[] | undefined {
  const values = listOf(value);
  const unknown = values?.find((v) => !allowed.includes(v as T));
  if (unknown !== undefined) throw invalid(`Invalid \`${field}\`: ${quoted(unknown)} is not one of ${allowed.join(', ')}.`);
  return values as T[] | undefined;
}

function idsOf(field: string, value: string | string[] | undefined): string[] | undefined {
  const ids = listOf(value);
  if (ids === undefined || ids.length === 0) return undefined;
  if (ids.length > MAX_IDS) throw invalid(`Invalid \`${field}\`: at most ${MAX_IDS} ids are allowed, got ${ids.length}.`);
  const bad = ids.find((id) => !UUID.test(id));
  if (bad !== undefined) throw invalid(`Invalid \`${field}\`: ${quoted(bad)} is not a UUID.`);
  return ids.map((id) => id.toLowerCase());
}

/** Reads and checks the parameters; `now` is where a future end_date stops; `dimensions` those the route takes. */
export function readMetricsQuery(params: MetricsParams, now: number, allowed: readonly Dimension[] = DIMENSIONS): MetricsQuery {
  const metrics = namesOf('metrics', params.metrics, METRICS);
  const dimensions = namesOf('dimensions', params.dimensions, allowed) ?? [];
  const granularities = namesOf('granularity', params.granularity, GRANULARITIES) ?? ['daily'];
  const granularity = granularities[0];
  if (granularity === undefined || granularities.length > 1) throw invalid(`Invalid \`granularity\`: choose one of ${GRANULARITIES.join(', ')}.`);
  const domainIds = idsOf('domain_id', params.domain_id);
  const emailIds = idsOf('email_id', params.email_id);
  const broadcastIds = idsOf('broadcast_id', params.broadcast_id);
  if (dimensions.includes('email') && dimensions.includes('broadcast')) throw invalid('The `email` and `broadcast` dimensions cannot be combined.');
  if (emailIds && (broadcastIds || dimensions.includes('broadcast'))) throw invalid('`email_id` cannot be combined with `broadcast_id` or the `broadcast` dimension.');
  if (broadcastIds && dimensions.includes('email')) throw invalid('`broadcast_id` cannot be combined with the `email` dimension.');
  const zone = zoneOf(params.timezone ?? 'UTC');
  const range = slotRange(zone, params.start_date, params.end_date, now);
  const periods = periodStarts(zone, range.from, range.to, granularity, MAX_PERIODS + 1);
  if (periods.length > MAX_PERIODS) {
    throw invalid(`The range from \`start_date\` to \`end_date\` holds more than ${MAX_PERIODS.toLocaleString('en-US')} ${granularity} periods: narrow it or choose a coarser \`granularity\`.`);
  }
  return { range, zone, granularity, periods, metrics: metrics?.length ? metrics : [...METRICS], dimensions, domainIds, emailIds, broadcastIds };
}
