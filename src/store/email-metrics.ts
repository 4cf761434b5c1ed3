// The rollup (email_metrics) and its increments. The events' transactions append increments to
// email_metric_deltas; every worker folds them into the rollup every few seconds
// (workers/metrics-folding.ts). A question reads both, in one statement: one snapshot, in which each
// increment is either still appended or already folded, so the counts are exact at every moment.
import { sql } from 'kysely';
import type { Db, Tx } from './db.ts';
import { insertRows } from './insert-rows.ts';
import type { EmailMetricTable } from './schema.ts';

export type EmailMetricRow = EmailMetricTable;

const keyOf = (row: EmailMetricRow) => `${row.project_id}\n${row.slot}\n${row.domain}\n${row.broadcast_id}\n${row.metric}`;

/**
 * Increments with the same key added into one: fewer rows, and PostgreSQL refuses an upsert that
 * meets the same key twice in one statement.
 */
export function mergeMetricRows(rows: EmailMetricRow[]): EmailMetricRow[] {
  if (rows.length < 2) return rows;
  const merged = new Map<string, EmailMetricRow>();
  for (const row of rows) {
    const key = keyOf(row);
    const known = merged.get(key);
    if (known) known.count += row.count;
    else merged.set(key, { ...row });
  }
  return [...merged.values()];
}

/** Appends increments in the caller's transaction: no row another transaction raises too, so no wait on one. */
export async function addMetrics(tx: Tx, rows: EmailMetricRow[]): Promise<void> {
  await insertRows(tx, 'email_metric_deltas', mergeMetricRows(rows));
}

/**
 * Moves up to `limit` appended increments into the rollup, in the caller's transaction (the conflict
 * rule of insert-rows.ts adds them up); how many it moved. Folds running at once in several processes
 * take different rows: a row one deletes, the other's delete waits for and then skips.
 */
export async function foldMetrics(tx: Tx, limit: number): Promise<number> {
  const oldest = tx.selectFrom('email_metric_deltas').select('id').orderBy('id').limit(limit);
  const moved = await tx
    .deleteFrom('email_metric_deltas')
    .where('id', 'in', oldest)
    .returning(['project_id', 'slot', 'domain', 'broadcast_id', 'metric', 'count'])
    .execute();
  await insertRows(tx, 'email_metrics', mergeMetricRows(moved));
  return moved.length;
}

/**
 * Which rollup rows a question reads: the project's, slots in [from, to), and optionally some domains
 * and broadcasts (each list non-empty), or the emails of every broadcast.
 */
export interface MetricScope {
  project: string;
  from: number;
  to: number;
  domains?: string[];
  broadcastIds?: string[];
  broadcastsOnly?: boolean;
  metrics: string[];
}

export interface MetricSum {
  slot: number | null;
  domain: string | null;
  broadcast_id: string | null;
  metric: string;
  count: number;
}

/**
 * The counts in a scope, summed over what `by` leaves out (slot, domain, broadcast): the rollup's sums,
 * then the increments not folded yet, in one statement. A combination may come twice, once from each:
 * the caller adds them up.
 */
export async function sumMetrics(db: Db, scope: MetricScope, by: { slot: boolean; domain: boolean; broadcast: boolean }): Promise<MetricSum[]> {
  const sumOf = (table: 'email_metrics' | 'email_metric_deltas') => {
    let query = db
      .selectFrom(table)
      .select([
        (by.slot ? sql<number | null>`slot` : sql<number | null>`null`).as('slot'),
        (by.domain ? sql<string | null>`domain` : sql<string | null>`null`).as('domain'),
        (by.broadcast ? sql<string | null>`broadcast_id` : sql<string | null>`null`).as('broadcast_id'),
        'metric',
        // An integer sum: bigint on PostgreSQL, read as a number (db.ts).
        sql<number>`sum(count)`.as('count'),
      ])
      .where('project_id', '=', scope.project)
      .where('slot', '>=', scope.from)
      .where('slot', '<', scope.to)
      .where('metric', 'in', scope.metrics);
    if (scope.domains) query = query.where('domain', 'in', scope.domains);
    if (scope.broadcastIds) query = query.where('broadcast_id', 'in', scope.broadcastIds);
    else if (scope.broadcastsOnly) query = query.where('broadcast_id', '<>', '');
    // In the rollup key's order (project_id, slot, metric, domain, broadcast_id), so that SQLite reads the groups in order.
    const groups = [...(by.slot ? ['slot' as const] : []), 'metric' as const, ...(by.domain ? ['domain' as const] : []), ...(by.broadcast ? ['broadcast_id' as const] : [])];
    return query.groupBy(groups);
  };
  return sumOf('email_metrics').unionAll(sumOf('email_metric_deltas')).execute();
}
