import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { findBroadcastNames } from '../../store/broadcasts.ts';
import { findDomainNames } from '../../store/domains.ts';
import { sumMetrics } from '../../store/email-metrics.ts';
import { emailIdsWithEvents, listEventsOfEmails } from '../../store/emails.ts';
import { COUNT_METRICS, countsUnique, eventMetrics, rate, RATE_METRICS, type CountMetric, type Metric } from './metric-names.ts';
import { readMetricsQuery, type MetricsParams, type MetricsQuery } from './metrics-query.ts';
import { zonedIso } from './periods.ts';
import { instantOf, senderDomain, slotOf } from './rollup.ts';

// GET /emails/metrics (and the dashboard's metrics page): counts from the rollup, summed over the
// range's slots; or, for the `email` dimension and the `email_id` filter, which the rollup does not
// keep, from the emails' own events, folded by the same rule (eventMetrics).

/** The most rows the `email` dimension answers with. */
export const MAX_EMAIL_ROWS = 10_000;

/** The counts of one combination of dimensions. */
type Counts = Partial<Record<CountMetric, number>>;

/** One combination of dimension values (absent: not a requested dimension). */
interface Cell {
  period?: number;
  domain?: string;
  broadcast?: string;
  email?: string;
  counts: Counts;
}

export interface MetricsAnswer {
  object: 'metrics';
  start_date: string;
  end_date: string;
  metrics: Metric[];
  dimensions: string[];
  granularity: string;
  totals: Record<string, number>;
  data?: Record<string, string | number | null>[];
}

/** The count metrics a set of metrics is made of (a rate needs its two counts). */
function countsNeeded(metrics: Metric[]): CountMetric[] {
  const needed = new Set<CountMetric>();
  for (const metric of metrics) {
    if (metric in RATE_METRICS) RATE_METRICS[metric as keyof typeof RATE_METRICS].forEach((m) => needed.add(m));
    else needed.add(metric as CountMetric);
  }
  return COUNT_METRICS.filter((m) => needed.has(m));
}

/** The index of the period holding a slot (periods sorted by start). */
function periodIndex(periods: number[], slot: number): number {
  let low = 0;
  let high = periods.length - 1;
  while (low < high) {
    const mid = (low + high + 1) >> 1;
    if (periods[mid]! <= slot) low = mid;
    else high = mid - 1;
  }
  return low;
}

class Cells {
  readonly byKey = new Map<string, Cell>();
  add(cell: Omit<Cell, 'counts'>, metric: CountMetric, count: number): void {
    const key = `${cell.period ?? ''}\n${cell.domain ?? ''}\n${cell.broadcast ?? ''}\n${cell.email ?? ''}`;
    let known = this.byKey.get(key);
    if (!known) this.byKey.set(key, (known = { ...cell, counts: {} }));
    known.counts[metric] = (known.counts[metric] ?? 0) + count;
  }
}

/** Reads the rollup into cells. */
async function fromRollup(ctx: Context, q: MetricsQuery, scope: { project: string; domains?: string[]; broadcastsOnly: boolean }, needed: CountMetric[], cells: Cells): Promise<void> {
  const by = { slot: q.dimensions.includes('period'), domain: q.dimensions.includes('domain'), broadcast: q.dimensions.includes('broadcast') };
  const sums = await sumMetrics(ctx.db, { ...q.range, ...scope, broadcastIds: q.broadcastIds, metrics: needed }, by);
  for (const sum of sums) {
    const cell = {
      period: by.slot ? periodIndex(q.periods, sum.slot!) : undefined,
      domain: sum.domain ?? undefined,
      broadcast: sum.broadcast_id ?? undefined,
    };
    cells.add(cell, sum.metric as CountMetric, sum.count);
  }
}

/** Folds the events of the emails in question into cells (every event of an email is read, so that "first" is right). */
async function fromEvents(ctx: Context, project: string, q: MetricsQuery, domains: string[] | undefined, needed: CountMetric[], cells: Cells): Promise<void> {
  let ids = q.emailIds;
  if (!ids) {
    ids = await emailIdsWithEvents(ctx.db, project, toTimestamp(q.range.from), toTimestamp(q.range.to), MAX_EMAIL_ROWS + 1);
    if (ids.length > MAX_EMAIL_ROWS) throw tooManyEmails();
  }
  const wanted = new Set(needed);
  const domainSet = domains && new Set(domains);
  for (let i = 0; i < ids.length; i += 500) {
    const events = await listEventsOfEmails(ctx.db, project, ids.slice(i, i + 500));
    let seen = new Set<string>();
    let emailId = '';
    let domain = '';
    for (const event of events) {
      if (event.email_id !== emailId) {
        emailId = event.email_id;
        domain = senderDomain(event.from);
        seen = new Set();
      }
      let first = false;
      if (countsUnique(event.type) && !event.bot) {
        const key = `${event.recipient}\n${event.type}`;
        first = !seen.has(key);
        seen.add(key);
      }
      const at = instantOf(event.created_at);
      if (at < q.range.from || at >= q.range.to || (domainSet && !domainSet.has(domain))) continue;
      const cell = {
        period: q.dimensions.includes('period') ? periodIndex(q.periods, slotOf(at)) : undefined,
        domain: q.dimensions.includes('domain') ? domain : undefined,
        email: q.dimensions.includes('email') ? emailId : undefined,
      };
      for (const metric of eventMetrics(event, first)) if (wanted.has(metric)) cells.add(cell, metric, 1);
    }
  }
}

const tooManyEmails = () =>
  new AppError('validation_error', `The \`email\` dimension would answer with more than ${MAX_EMAIL_ROWS.toLocaleString('en-US')} rows: filter by \`email_id\` or narrow the range.`);

/** The requested metrics of some counts, rates computed from them. */
function metricValues(metrics: Metric[], counts: Counts): Record<string, number> {
  const values: Record<string, number> = {};
  for (const metric of metrics) {
    const parts = RATE_METRICS[metric as keyof typeof RATE_METRICS];
    values[metric] = parts ? rate(counts[parts[0]] ?? 0, counts[parts[1]] ?? 0) : (counts[metric as CountMetric] ?? 0);
  }
  return values;
}

function addCounts(into: Counts, counts: Counts): void {
  for (const [metric, count] of Object.entries(counts) as [CountMetric, number][]) into[metric] = (into[metric] ?? 0) + count;
}

/**
 * The data rows: one per combination of the requested dimensions that has counts; with `period`, every
 * period of the range for each such combination (zeros included), so that a series has no holes.
 */
function combine(q: MetricsQuery, cells: Cell[]): Cell[] {
  if (!q.dimensions.includes('period')) return cells;
  const others = new Map<string, Cell>();
  const byKey = new Map<string, Cell>();
  for (const cell of cells) {
    const key = `${cell.domain ?? ''}\n${cell.broadcast ?? ''}\n${cell.email ?? ''}`;
    if (!others.has(key)) others.set(key, { domain: cell.domain, broadcast: cell.broadcast, email: cell.email, counts: {} });
    byKey.set(`${cell.period}\n${key}`, cell);
  }
  // Periods alone: the one series, even with nothing in it.
  if (others.size === 0 && q.dimensions.length === 1) others.set('\n\n', { counts: {} });
  if (q.dimensions.includes('email') && others.size * q.periods.length > MAX_EMAIL_ROWS) throw tooManyEmails();
  const rows: Cell[] = [];
  for (const [key, other] of others) {
    q.periods.forEach((_, period) => rows.push(byKey.get(`${period}\n${key}`) ?? { ...other, period, counts: {} }));
  }
  return rows;
}

/**
 * The answer of GET /emails/metrics for its parameters; with `broadcastsOnly`, that of GET
 * /broadcasts/metrics: the emails of broadcasts, by period and broadcast. Only the project's emails
 * count; another project's domain, email or broadcast id counts nothing, as a missing one.
 */
export async function emailMetrics(ctx: Context, project: string, params: MetricsParams, { broadcastsOnly = false } = {}): Promise<MetricsAnswer> {
  const q = readMetricsQuery(params, ctx.clock.now(), broadcastsOnly ? ['period', 'broadcast'] : undefined);
  const needed = countsNeeded(q.metrics);
  const filtered = q.domainIds ? (await findDomainNames(ctx.db, project, { ids: q.domainIds })).map((d) => d.name) : undefined;
  const cells = new Cells();
  // A domain_id filter that names no domain leaves nothing to count.
  if (filtered?.length !== 0) {
    if (q.emailIds || q.dimensions.includes('email')) await fromEvents(ctx, project, q, filtered, needed, cells);
    else await fromRollup(ctx, q, { project, domains: filtered, broadcastsOnly }, needed, cells);
  }
  const totals: Counts = {};
  for (const cell of cells.byKey.values()) addCounts(totals, cell.counts);
  const answer: MetricsAnswer = {
    object: 'metrics',
    start_date: new Date(q.range.from).toISOString(),
    end_date: new Date(q.range.to).toISOString(),
    metrics: q.metrics,
    dimensions: q.dimensions,
    granularity: q.granularity,
    totals: metricValues(q.metrics, totals),
  };
  if (q.dimensions.length === 0) return answer;
  const rows = combine(q, [...cells.byKey.values()]);
  if (q.dimensions.includes('email') && rows.length > MAX_EMAIL_ROWS) throw tooManyEmails();
  answer.data = await dataRows(ctx, project, q, rows);
  return answer;
}

/** The rows as the API writes them, in order of period, domain, broadcast and email. */
async function dataRows(ctx: Context, project: string, q: MetricsQuery, rows: Cell[]): Promise<Record<string, string | number | null>[]> {
  const domainNames = [...new Set(rows.flatMap((r) => (r.domain === undefined ? [] : [r.domain])))];
  const domainIds = new Map((await findDomainNames(ctx.db, project, { names: domainNames })).map((d) => [d.name, d.id]));
  const broadcastIds = [...new Set(rows.flatMap((r) => (r.broadcast ? [r.broadcast] : [])))];
  const broadcastNames = new Map((await findBroadcastNames(ctx.db, broadcastIds)).map((b) => [b.id, b.name]));
  const order = (a: Cell, b: Cell) =>
    (a.period ?? 0) - (b.period ?? 0) || (a.domain ?? '').localeCompare(b.domain ?? '') || (a.broadcast ?? '').localeCompare(b.broadcast ?? '') || (a.email ?? '').localeCompare(b.email ?? '');
  return rows.sort(order).map((cell) => ({
    ...(cell.period === undefined ? {} : { period: zonedIso(q.zone, q.periods[cell.period]!) }),
    ...(cell.domain === undefined ? {} : { domain_id: domainIds.get(cell.domain) ?? null, domain_name: cell.domain }),
    ...(cell.broadcast === undefined ? {} : { broadcast_id: cell.broadcast || null, broadcast_name: cell.broadcast ? (broadcastNames.get(cell.broadcast) ?? null) : null }),
    ...(cell.email === undefined ? {} : { email_id: cell.email }),
    ...metricValues(q.metrics, cell.counts),
  }));
}
