import { toTimestamp } from '../../time/clock.ts';
import type { Context } from '../../context.ts';
import { invalidField, quoted } from '../../errors.ts';
import { isUuid } from '../../time/ids.ts';
import { countContactsInSegments, countSegmentContacts, type SegmentCountScope } from '../../store/segments.ts';
import { parseDateParam, zoneOf } from '../metrics/periods.ts';

// GET /segments/metrics: each segment's contacts as they are now, subscribed or not (a contact's
// `unsubscribed`), optionally only those created within a range.

export interface SegmentMetricsParams {
  segment_id?: string | string[];
  'filter.segmentId[]'?: string | string[];
  sort_by?: string;
  sort_order?: string;
  start_date?: string;
  end_date?: string;
  timezone?: string;
}

/** The most segments one question names. */
const MAX_SEGMENTS = 100;

function segmentIdsOf(params: SegmentMetricsParams): string[] | undefined {
  const given = [params.segment_id ?? [], params['filter.segmentId[]'] ?? []].flat().flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  if (given.length === 0) return undefined;
  if (given.length > MAX_SEGMENTS) throw invalidField('segment_id', `takes at most ${MAX_SEGMENTS} ids, got ${given.length}.`);
  const bad = given.find((id) => !isUuid(id));
  if (bad !== undefined) throw invalidField('segment_id', `${quoted(bad)} is not an id.`);
  return [...new Set(given.map((id) => id.toLowerCase()))];
}

/** GET /segments/metrics: a row per segment (newest first by default) and totals counting each contact once. */
export async function segmentsMetrics(ctx: Context, project: string, params: SegmentMetricsParams) {
  if (params.sort_by !== undefined && params.sort_by !== 'date') throw invalidField('sort_by', 'must be "date" (when the segment was created).');
  if (params.sort_order !== undefined && !['asc', 'desc'].includes(params.sort_order)) throw invalidField('sort_order', 'must be "asc" or "desc".');
  const zone = zoneOf(params.timezone ?? 'UTC');
  const scope: SegmentCountScope = { segmentIds: segmentIdsOf(params) };
  if (params.start_date !== undefined) scope.from = toTimestamp(parseDateParam('start_date', params.start_date, zone));
  if (params.end_date !== undefined) scope.to = toTimestamp(parseDateParam('end_date', params.end_date, zone));
  const [rows, totals] = await Promise.all([countSegmentContacts(ctx.db, project, scope, params.sort_order === 'asc'), countContactsInSegments(ctx.db, project, scope)]);
  return {
    object: 'segments_metrics' as const,
    totals,
    data: rows.map(({ id, name, ...counts }) => ({ segment_id: id, segment_name: name, ...counts })),
  };
}
