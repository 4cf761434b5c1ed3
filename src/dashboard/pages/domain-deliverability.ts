import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as deliverability from '../../domain/deliverability/deliverability.ts';
import type { DeliverabilityCheck } from '../../domain/deliverability/check.ts';
import { emailMetrics, type MetricsAnswer } from '../../domain/metrics/metrics.ts';
import * as domains from '../../domain/sending-domains/domains.ts';
import { warmupCurve, warmupDay } from '../../domain/sending-domains/warmup.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { status, when } from '../page-parts.ts';
import { pauseBanner, RESUMED } from '../pause-banner.ts';
import { pathId } from '../path-id.ts';

// A domain's deliverability: its last check, each check with its fix and the DNS records to copy,
// Check now (the domain function of POST /domains/:id/deliverability), its sent, bounce and complaint
// rates per day over 30 days (those of GET /emails/metrics?domain_id=, drawn by metrics-chart.js), its
// warm-up curve with today's place on it, and the guards' pause with Resume.

const CHART_DAYS = 30;
const DAY = 86_400_000;
const NOTICES: Record<string, string> = {
  checked: 'Checked now: every check below is the new result.',
  warmup: 'Warm-up started: today is its first day.',
  'warmup-ended': 'Warm-up ended: the domain sends without its daily volume (a daily limit, if set, applies).',
  resumed: RESUMED,
};

const LABELS: Record<string, string> = {
  spf: 'SPF',
  dkim: 'DKIM',
  dmarc: 'DMARC',
  alignment: 'Alignment',
  return_path: 'Return path',
  ptr: 'Reverse DNS (PTR)',
  fcrdns: 'Forward-confirmed reverse DNS',
  blocklists: 'Blocklists',
  mta_sts: 'MTA-STS',
  tls_rpt: 'TLS-RPT',
  bulk_sender: 'Bulk sender rules',
  bounce_rate: 'Bounce rate',
  complaint_rate: 'Complaint rate',
  dmarc_reports: 'DMARC reports',
};

// A record in a fix, as check.ts's `record` writes it: `name` TYPE `value`. One backtick opens each
// try and the spans between backticks hold none, so the match is linear.
const RECORD = /`([^`]+)` (TXT|MX|CNAME|A|AAAA|PTR) `([^`]+)`/g;

/** Text with its `code spans` set as code. */
const withCode = (text: string): Html => html`${text.split('`').map((part, i) => (i % 2 === 1 ? html`<code>${part}</code>` : part))}`;

/** Each DNS record a fix names, with copy buttons for its name and its value. */
function recordsOf(fix: string): Html {
  return html`${[...fix.matchAll(RECORD)].map(
    ([, name, type, value]) => html`<dl class="dns-record">
<dt>Name</dt><dd><code>${name}</code> <button type="button" class="secondary" data-copy="${name}" aria-label="Copy the ${type} record's name ${name}">Copy</button></dd>
<dt>Type</dt><dd>${type}</dd>
<dt>Value</dt><dd><code class="record-value">${value}</code> <button type="button" class="secondary" data-copy="${value}" aria-label="Copy the ${type} value of ${name}">Copy</button></dd>
</dl>`,
  )}`;
}

function checkRows(checks: DeliverabilityCheck[]): Html {
  return html`${checks.map(
    (check) => html`<tr id="check-${check.id}">
<th scope="row">${LABELS[check.id] ?? check.id}</th>
<td>${status(check.status)}</td>
<td>${withCode(check.detail)}</td>
<td>${check.fix === null ? '' : html`${withCode(check.fix)}${recordsOf(check.fix)}`}</td>
</tr>`,
  )}`;
}

function checksSection(id: string, csrfToken: string, report: Awaited<ReturnType<typeof deliverability.lastDeliverability>>): Html {
  const checkNow = html`<form class="inline" method="post" action="/dashboard/domains/${id}/deliverability">
<input type="hidden" name="_csrf" value="${csrfToken}"><button type="submit">Check now</button>
</form>`;
  if (!report) {
    return html`<section aria-labelledby="checks"><h2 id="checks">Checks</h2>
<p id="never-checked">Never checked yet: Check now looks up the domain's records, reverse DNS and blocklists (a few seconds); the daily check does too.</p>
${checkNow}</section>`;
  }
  return html`<section aria-labelledby="checks"><h2 id="checks">Checks</h2>
<dl class="facts">
<dt>Overall</dt><dd id="overall">${status(report.status)}</dd>
<dt>Checked</dt><dd>${when(report.checked_at)}</dd>
</dl>
${checkNow}
<table class="list checks">
<caption class="visually-hidden">Each check, what it found, and how to fix it</caption>
<thead><tr><th scope="col">Check</th><th scope="col">Status</th><th scope="col">Found</th><th scope="col">Fix</th></tr></thead>
<tbody>${checkRows(report.checks)}</tbody>
</table></section>`;
}

const percent = (value: number) => `${(value * 100).toFixed(2)}%`;

/** Sent, bounce rate and complaint rate per day; the rates on their own axis. */
function ratesSection(answer: MetricsAnswer): Html {
  const rows = answer.data ?? [];
  const column = (metric: string) => rows.map((row) => row[metric] as number);
  const chart = {
    timezone: 'UTC',
    granularity: answer.granularity,
    periods: rows.map((row) => Date.parse(row.period as string) / 1000),
    series: { sent: column('sent') },
    rates: { bounce_rate: column('bounce_rate'), complaint_rate: column('complaint_rate') },
  };
  const totals = [
    ['Sent', String(answer.totals.sent ?? 0)],
    ['Bounced', String(answer.totals.bounced ?? 0)],
    ['Complained', String(answer.totals.complained ?? 0)],
    ['Bounce rate', percent(answer.totals.bounce_rate ?? 0)],
    ['Complaint rate', percent(answer.totals.complaint_rate ?? 0)],
  ];
  return html`<section aria-labelledby="rates"><h2 id="rates">Last ${CHART_DAYS} days</h2>
<p>Per UTC day: messages sent, and the bounce rate (bounced / sent) and complaint rate (complained / delivered) on the right-hand axis.</p>
<div id="rates-chart" class="chart" role="img" aria-label="Sent, bounce rate and complaint rate per day over the last ${CHART_DAYS} days" data-chart="${JSON.stringify(chart)}"></div>
<table class="list" id="rates-totals">
<caption>Totals over ${CHART_DAYS} days</caption>
<thead><tr><th scope="col">Metric</th><th scope="col">Total</th></tr></thead>
<tbody>${totals.map(([name, value]) => html`<tr><th scope="row">${name}</th><td>${value}</td></tr>`)}</tbody>
</table></section>`;
}

type Warmup = NonNullable<Awaited<ReturnType<typeof domains.getDomain>>['warmup']>;

/** The warm-up's daily volume from its first day to its last, today marked; the day after has no limit. */
function warmupSection(id: string, csrfToken: string, warmup: Warmup | null, now: number): Html {
  const action = `/dashboard/domains/${id}/warmup`;
  if (!warmup) {
    return html`<section aria-labelledby="warmup"><h2 id="warmup">Warm-up</h2>
<p id="no-warmup">No warm-up. A new domain or sending address earns mailbox providers' trust by a volume that grows day by day, from a start to no limit over a number of days.</p>
<form class="inline" method="post" action="${action}">
<input type="hidden" name="_csrf" value="${csrfToken}">
<label>Messages on the first day <input name="start" type="number" min="1" value="50" required></label>
<label>Days to no limit <input name="days" type="number" min="1" max="365" value="30" required></label>
<button type="submit">Start warm-up</button>
</form></section>`;
  }
  const startedAt = Date.parse(warmup.started_at);
  const today = warmupDay(startedAt, now);
  const firstDay = Math.floor(startedAt / DAY) * DAY;
  const days = warmupCurve(warmup).filter((point) => point.volume !== null);
  const chart = {
    timezone: 'UTC',
    granularity: 'daily',
    log: true,
    periods: days.map((point) => (firstDay + point.day * DAY) / 1000),
    series: { daily_volume: days.map((point) => point.volume) },
    marks: { today: days.map((point) => (point.day === today ? point.volume : null)) },
  };
  const position =
    today >= warmup.days ? `Finished: no limit since day ${warmup.days + 1}.` : `Today is day ${today + 1} of ${warmup.days}: up to ${warmup.today_limit} messages.`;
  return html`<section aria-labelledby="warmup"><h2 id="warmup">Warm-up</h2>
<p id="warmup-today">${position} It started on ${warmup.started_at.slice(0, 10)} at ${warmup.start} a day; mail over a day's volume waits for the next day, oldest first.</p>
<div id="warmup-chart" class="chart" role="img" aria-label="The warm-up's messages a day from day 1 to day ${warmup.days} on a log scale, today marked" data-chart="${JSON.stringify(chart)}"></div>
<form class="inline" method="post" action="${action}">
<input type="hidden" name="_csrf" value="${csrfToken}"><input type="hidden" name="end" value="true">
<button type="submit" class="secondary">End warm-up</button>
</form></section>`;
}

export function domainDeliverabilityPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/domains/:id/deliverability', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const csrfToken = request.session!.csrfToken;
    const domain = await domains.getDomain(ctx, request.session!.projectId, pathId(request, 'id', 'Domain'));
    const report = await deliverability.lastDeliverability(ctx, request.session!.projectId, domain.id);
    const start = new Date(ctx.clock.now() - (CHART_DAYS - 1) * DAY).toISOString().slice(0, 10);
    const rates = await emailMetrics(ctx, request.session!.projectId, {
      domain_id: domain.id,
      start_date: start,
      granularity: 'daily',
      metrics: ['sent', 'bounced', 'complained', 'bounce_rate', 'complaint_rate'],
      dimensions: ['period'],
    });
    const content = html`<p><a href="/dashboard/domains/${domain.id}">${domain.name}</a> · <a href="/dashboard/domains/${domain.id}/dmarc">DMARC reports</a></p>
${pauseBanner(domain, csrfToken, 'deliverability')}
${checksSection(domain.id, csrfToken, report)}
${warmupSection(domain.id, csrfToken, domain.warmup, ctx.clock.now())}
${ratesSection(rates)}`;
    const notice = query.done ? NOTICES[query.done] : undefined;
    const options = { section: 'domains' as const, csrfToken, notice, styles: ['uPlot.min.css'], scripts: ['uPlot.iife.min.js', 'metrics-chart.js'] };
    return reply.type('text/html; charset=utf-8').send(page(`Deliverability of ${domain.name}`, content, options));
  });

  app.post('/domains/:id/deliverability', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Domain');
    await deliverability.checkDeliverability(ctx, request.session!.projectId, id);
    return reply.redirect(`/dashboard/domains/${id}/deliverability?done=checked`, 303);
  });

  // The same change as PATCH /domains/:id {warmup}; what is not a whole number is refused there.
  app.post('/domains/:id/warmup', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Domain');
    const form = request.body as Record<string, string | undefined>;
    const warmup = form.end === 'true' ? null : { start: Number(form.start), days: Number(form.days) };
    await domains.updateDomain(ctx, request.session!.projectId, id, { warmup });
    return reply.redirect(`/dashboard/domains/${id}/deliverability?done=${warmup ? 'warmup' : 'warmup-ended'}`, 303);
  });
}
