import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { AppError } from '../../errors.ts';
import { emailMetrics, type MetricsAnswer } from '../../domain/metrics/metrics.ts';
import { GRANULARITIES } from '../../domain/metrics/periods.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';

// The metrics page: sent, delivered, bounced, complained, opened and clicked per period, drawn by
// uPlot (assets/metrics-chart.js reads the series from the chart's data attribute), and their totals;
// the domain function of GET /emails/metrics, with the period, granularity and zone chosen in a form.

const SERIES = ['sent', 'delivered', 'bounced', 'complained', 'opened', 'clicked'] as const;
const RATES = ['delivery_rate', 'bounce_rate', 'complaint_rate', 'open_rate', 'click_rate'] as const;
type Query = Record<string, string | undefined>;

const label = (metric: string) => metric.replaceAll('_', ' ').replace(/^./, (c) => c.toUpperCase());
const percent = (value: number) => `${(value * 100).toFixed(2)}%`;

function form(query: Query): Html {
  const granularity = query.granularity || 'daily';
  return html`<form class="filters" method="get" action="/dashboard/metrics">
<label>From<input type="date" name="start" value="${query.start ?? ''}"></label>
<label>To<input type="date" name="end" value="${query.end ?? ''}"></label>
<label>Granularity<select name="granularity">${GRANULARITIES.map((g) => html`<option value="${g}"${g === granularity ? html` selected` : ''}>${g}</option>`)}</select></label>
<label>Time zone<input type="text" name="timezone" value="${query.timezone || 'UTC'}" placeholder="UTC" autocomplete="off"></label>
<button type="submit">Show</button> <a href="/dashboard/metrics">Last 7 days</a>
</form>`;
}

function results(answer: MetricsAnswer, timezone: string): Html {
  const rows = answer.data ?? [];
  const chart = {
    timezone,
    granularity: answer.granularity,
    periods: rows.map((row) => Date.parse(row.period as string) / 1000),
    series: Object.fromEntries(SERIES.map((metric) => [metric, rows.map((row) => row[metric] as number)])),
  };
  return html`<p>From <time datetime="${answer.start_date}">${answer.start_date.slice(0, 16).replace('T', ' ')}</time> to <time datetime="${answer.end_date}">${answer.end_date.slice(0, 16).replace('T', ' ')}</time> UTC, ${rows.length} ${answer.granularity} periods in ${timezone}.</p>
<div id="metrics-chart" class="chart" role="img" aria-label="Sent, delivered, bounced, complained, opened and clicked per period" data-chart="${JSON.stringify(chart)}"></div>
<table class="list" id="metrics-totals">
<caption>Totals</caption>
<thead><tr><th scope="col">Metric</th><th scope="col">Total</th></tr></thead>
<tbody>${SERIES.map((m) => html`<tr><th scope="row">${label(m)}</th><td data-metric="${m}">${answer.totals[m] ?? 0}</td></tr>`)}${RATES.map(
    (m) => html`<tr><th scope="row">${label(m)}</th><td data-metric="${m}">${percent(answer.totals[m] ?? 0)}</td></tr>`,
  )}</tbody>
</table>`;
}

export function metricsPages(app: App, ctx: Context): void {
  app.get('/metrics', { config: { access: 'dashboard' }, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const timezone = query.timezone || 'UTC';
    let content: Html;
    try {
      const answer = await emailMetrics(ctx, request.session!.projectId, {
        start_date: query.start || undefined,
        end_date: query.end || undefined,
        timezone,
        granularity: query.granularity || undefined,
        metrics: [...SERIES, ...RATES],
        dimensions: ['period'],
      });
      content = html`${form(query)}${results(answer, timezone)}`;
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      reply.status(error.status);
      content = html`${form(query)}<p class="error" role="alert">${error.message}</p>`;
    }
    const options = { section: 'metrics' as const, csrfToken: request.session!.csrfToken, styles: ['uPlot.min.css'], scripts: ['uPlot.iife.min.js', 'metrics-chart.js'] };
    return reply.type('text/html; charset=utf-8').send(page('Metrics', content, options));
  });
}
