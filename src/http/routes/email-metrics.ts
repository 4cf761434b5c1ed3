import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { emailMetrics } from '../../domain/metrics/metrics.ts';
import { projectOf } from '../auth.ts';
import { MAX, Str } from '../schemas/common.ts';

/** A list parameter: comma-separated, repeated, or both (checked by the domain, which names the mistake). */
const List = (description: string) => Type.Optional(Type.Union([Str(8 * 1024), Type.Array(Str(8 * 1024), { maxItems: 200 })], { description }));

export const MetricsQuery = Type.Object({
  start_date: Type.Optional(Str(MAX.date, 'ISO 8601 date or datetime; default: the start of the day six days before end_date')),
  end_date: Type.Optional(Str(MAX.date, 'ISO 8601 date (its whole day) or datetime; default and latest: now')),
  timezone: Type.Optional(Str(MAX.short, 'IANA time zone of dates without an offset and of the periods; default UTC')),
  granularity: Type.Optional(Str(MAX.short, 'hourly, daily (default), weekly (from Monday) or monthly')),
  metrics: List('metrics to answer; default: all'),
  dimensions: List('period, domain, email, broadcast; default: none (totals only)'),
  domain_id: List('up to 100 domain ids'),
  email_id: List('up to 100 email ids'),
  broadcast_id: List('up to 100 broadcast ids'),
});

export const MetricsResponse = Type.Object({
  object: Type.Literal('metrics'),
  start_date: Type.String(),
  end_date: Type.String(),
  metrics: Type.Array(Type.String()),
  dimensions: Type.Array(Type.String()),
  granularity: Type.String(),
  totals: Type.Record(Type.String(), Type.Number()),
  data: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Null()])))),
});

export function emailMetricsRoutes(app: App, ctx: Context): void {
  app.get(
    '/emails/metrics',
    { schema: { summary: 'Email metrics: counts and rates over a range, by period, domain, email or broadcast', querystring: MetricsQuery, response: { 200: MetricsResponse } } },
    async (request) => emailMetrics(ctx, projectOf(request), request.query),
  );
}
