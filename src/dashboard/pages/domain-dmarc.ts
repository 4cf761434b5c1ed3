import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as dmarc from '../../domain/dmarc/dmarc-reports.ts';
import type { SourceSummary } from '../../domain/dmarc/source-summary.ts';
import { withTags } from '../../domain/deliverability/tag-list.ts';
import * as domains from '../../domain/sending-domains/domains.ts';
import { notFound } from '../../errors.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { csrfField, status, when } from '../page-parts.ts';
import { pager, readPage } from '../paging.ts';
import { pathId } from '../path-id.ts';

// A domain's DMARC reports (docs/reports.md): its sources over 30 days (GET /domains/:id/dmarc's
// function), messages passing and failing DMARC per day drawn by metrics-chart.js, the reports paged,
// and a report's rows. Without a report address, how to set one and the record to publish.

const PAGE_SIZE = 50;
const HTML = 'text/html; charset=utf-8';
type Domain = Awaited<ReturnType<typeof domains.getDomain>>;
type Report = Awaited<ReturnType<typeof dmarc.getDmarcReport>>;

const passFail = (counts: { pass: number; fail: number }) => html`${counts.pass} / ${counts.fail}`;

/** A DNS record with copy buttons for its name and value, as the deliverability page shows one. */
const recordToCopy = (name: string, value: string) => html`<dl class="dns-record" id="dmarc-record">
<dt>Name</dt><dd><code>${name}</code> <button type="button" class="secondary" data-copy="${name}" aria-label="Copy the DMARC record's name ${name}">Copy</button></dd>
<dt>Type</dt><dd>TXT</dd>
<dt>Value</dt><dd><code class="record-value">${value}</code> <button type="button" class="secondary" data-copy="${value}" aria-label="Copy the DMARC record's value">Copy</button></dd>
</dl>`;

/** Where reports go and the record that asks for them; without an address, a form that sets one. */
function setupSection(domain: Domain, csrf: Html): Html {
  const name = `_dmarc.${domain.name}`;
  const listed = domain.records.find((r) => r.record === 'DMARC');
  const address = domain.dmarc_reports?.address;
  if (address) {
    return html`<section aria-labelledby="setup"><h2 id="setup">Report address</h2>
<p>Reports mailed to <code>${address}</code> are read here. Receivers send them where the domain's DMARC record's <code>rua</code> says:</p>
${recordToCopy(name, listed?.value ?? `v=DMARC1; p=none; rua=mailto:${address};`)}</section>`;
  }
  const suggested = `dmarc@${domain.name}`;
  const receives = domain.capabilities.receiving === 'enabled';
  return html`<section aria-labelledby="setup"><h2 id="setup">Report address</h2>
<p id="no-address">No report address: the DMARC reports receivers send about ${domain.name} are not read here. Name an address at this domain (or another that receives mail here): the same as <code>PATCH /domains/${domain.id} {dmarc_reports: {address: "${suggested}"}}</code>.</p>
${receives ? '' : html`<p>Reports arrive as mail: enable receiving on ${domain.name} first (<code>PATCH /domains/${domain.id} {capabilities: {receiving: "enabled"}}</code>) and publish its MX record.</p>`}
<form class="inline" method="post" action="/dashboard/domains/${domain.id}/dmarc">
${csrf}<label>Report address<input name="address" type="email" required value="${suggested}" autocomplete="off"></label>
<button type="submit">Read reports there</button>
</form>
<p>Then publish the DMARC record that asks receivers to send them there:</p>
${recordToCopy(name, withTags(listed?.value ?? 'v=DMARC1; p=none', { rua: `mailto:${suggested}` }) + ';')}</section>`;
}

function sourceRows(sources: SourceSummary[]): Html {
  return html`${sources.map(
    (s) => html`<tr>
<th scope="row"><code>${s.source_ip}</code></th>
<td>${s.ours ? html`<span class="status status-pass">ours</span>` : html`<span class="status status-${s.alignment.fail > 0 ? 'fail' : 'warn'}">not ours</span>`}</td>
<td>${s.messages}</td><td>${passFail(s.spf)}</td><td>${passFail(s.dkim)}</td><td>${passFail(s.alignment)}</td>
</tr>`,
  )}`;
}

function sourcesSection(summary: Awaited<ReturnType<typeof dmarc.summarizeDomain>>): Html {
  return html`<section aria-labelledby="sources"><h2 id="sources">Sources, last ${dmarc.SUMMARY_DAYS} days</h2>
<p>${summary.messages} messages in ${summary.reports} reports. A source not ours whose mail fails DMARC sends as ${summary.name} without its keys: someone else, or a service not set up yet.</p>
<table class="list" id="dmarc-sources">
<caption class="visually-hidden">Messages by source address, with pass / fail for SPF, DKIM and DMARC</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Whose</th><th scope="col">Messages</th><th scope="col">SPF pass / fail</th><th scope="col">DKIM pass / fail</th><th scope="col">DMARC pass / fail</th></tr></thead>
<tbody>${summary.sources.length === 0 ? html`<tr><td colspan="6">No report yet.</td></tr>` : sourceRows(summary.sources)}</tbody>
</table></section>`;
}

function chartSection(days: Awaited<ReturnType<typeof dmarc.dmarcPerDay>>): Html {
  const chart = {
    timezone: 'UTC',
    granularity: 'daily',
    periods: days.map((d) => Date.parse(d.day) / 1000),
    series: { passing: days.map((d) => d.pass), failing: days.map((d) => d.fail) },
  };
  return html`<section aria-labelledby="per-day"><h2 id="per-day">Per day</h2>
<p>Messages the reports count as passing DMARC (DKIM or SPF aligned with From) and failing it, by the UTC day each report begins.</p>
<div id="dmarc-chart" class="chart" role="img" aria-label="Messages passing and failing DMARC per day over the last ${dmarc.SUMMARY_DAYS} days" data-chart="${JSON.stringify(chart)}"></div>
</section>`;
}

type Listed = Awaited<ReturnType<typeof dmarc.listDmarcReports>>['data'];

function reportRows(domainId: string, reports: Listed): Html {
  if (reports.length === 0) return html`<tr><td colspan="5">No report yet.</td></tr>`;
  return html`${reports.map(
    (r) => html`<tr>
<th scope="row"><a href="/dashboard/domains/${domainId}/dmarc/reports/${r.id}">${r.org_name}</a></th>
<td>${when(r.date_begin)} to ${when(r.date_end)}</td><td>${r.messages}</td><td>${r.row_count}</td><td>${when(r.received_at)}</td>
</tr>`,
  )}`;
}

/** Each DKIM signature or SPF check the receiver saw: `domain (selector or scope): result`. */
const authList = (entries: { domain: string; detail: string | null; result: string }[]) =>
  html`${entries.map((e, i) => html`${i > 0 ? ', ' : ''}${e.domain}${e.detail ? html` (${e.detail})` : ''}: ${e.result}`)}`;

function rowsTable(report: Report): Html {
  return html`<table class="list" id="dmarc-rows">
<caption class="visually-hidden">The report's rows</caption>
<thead><tr><th scope="col">Source</th><th scope="col">Messages</th><th scope="col">Disposition</th><th scope="col">DKIM</th><th scope="col">SPF</th><th scope="col">DKIM aligned</th><th scope="col">SPF aligned</th><th scope="col">From</th><th scope="col">Envelope from</th><th scope="col">Results</th></tr></thead>
<tbody>${report.rows.map(
    (r) => html`<tr>
<th scope="row"><code>${r.source_ip}</code></th><td>${r.count}</td><td>${r.disposition}</td><td>${status(r.dkim)}</td><td>${status(r.spf)}</td><td>${status(r.dkim_aligned)}</td><td>${status(r.spf_aligned)}</td>
<td>${r.header_from}</td><td>${r.envelope_from ?? ''}</td>
<td>DKIM ${authList(r.auth_results.dkim.map((d) => ({ ...d, detail: d.selector })))}; SPF ${authList(r.auth_results.spf.map((s) => ({ ...s, detail: s.scope })))}</td>
</tr>`,
  )}</tbody>
</table>`;
}

export function domainDmarcPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/domains/:id/dmarc', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Record<string, string | undefined>;
    const domain = await domains.getDomain(ctx, request.session!.projectId, pathId(request, 'id', 'Domain'));
    const summary = await dmarc.summarizeDomain(ctx, request.session!.projectId, domain.id, {});
    const days = await dmarc.dmarcPerDay(ctx, request.session!.projectId, domain.id);
    const reports = await dmarc.listDmarcReports(ctx, request.session!.projectId, { domain_id: domain.id }, readPage(query, PAGE_SIZE));
    const listQuery = { after: query.after, before: query.before };
    const content = html`<p><a href="/dashboard/domains/${domain.id}">${domain.name}</a> · <a href="/dashboard/domains/${domain.id}/deliverability">Deliverability</a></p>
${setupSection(domain, csrfField(request))}
${sourcesSection(summary)}
${chartSection(days)}
<section aria-labelledby="reports"><h2 id="reports">Reports</h2>
<table class="list" id="dmarc-reports">
<caption class="visually-hidden">The reports received, newest first</caption>
<thead><tr><th scope="col">From</th><th scope="col">Period</th><th scope="col">Messages</th><th scope="col">Rows</th><th scope="col">Received</th></tr></thead>
<tbody>${reportRows(domain.id, reports.data)}</tbody>
</table>
${pager(`/dashboard/domains/${domain.id}/dmarc`, listQuery, reports)}</section>`;
    const notice = query.done === 'address' ? 'Report address set: publish the DMARC record below so that receivers send their reports there.' : undefined;
    const options = { section: 'domains' as const, csrfToken: request.session!.csrfToken, notice, styles: ['uPlot.min.css'], scripts: ['uPlot.iife.min.js', 'metrics-chart.js'] };
    return reply.type(HTML).send(page(`DMARC reports of ${domain.name}`, content, options));
  });

  app.post('/domains/:id/dmarc', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Domain');
    await domains.updateDomain(ctx, request.session!.projectId, id, { dmarc_reports: { address: (request.body as Record<string, string | undefined>).address ?? '' } });
    return reply.redirect(`/dashboard/domains/${id}/dmarc?done=address`, 303);
  });

  app.get('/domains/:id/dmarc/reports/:reportId', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const domain = await domains.getDomain(ctx, request.session!.projectId, pathId(request, 'id', 'Domain'));
    const report = await dmarc.getDmarcReport(ctx, request.session!.projectId, pathId(request, 'reportId', 'DMARC report'));
    // Another domain's report is not this domain's page.
    if (report.domain_id !== domain.id) throw notFound('DMARC report');
    const policy = Object.entries(report.policy).filter(([, v]) => v !== null).map(([k, v]) => `${k}=${v}`).join('; ');
    const content = html`<p><a href="/dashboard/domains/${domain.id}/dmarc">DMARC reports of ${domain.name}</a></p>
<dl class="facts" id="dmarc-report">
<dt>From</dt><dd>${report.org_name}${report.email ? html` (${report.email})` : ''}</dd>
<dt>Report id</dt><dd><code>${report.report_id}</code></dd>
<dt>Period</dt><dd>${when(report.date_begin)} to ${when(report.date_end)}</dd>
<dt>Policy seen</dt><dd><code>${policy}</code> for ${report.domain}</dd>
<dt>Messages</dt><dd>${report.messages} in ${report.row_count} rows</dd>
<dt>Received</dt><dd>${when(report.received_at)}</dd>
</dl>
<section aria-labelledby="rows"><h2 id="rows">Rows</h2>
${rowsTable(report)}</section>`;
    return reply.type(HTML).send(page(`DMARC report from ${report.org_name}`, content, { section: 'domains', csrfToken: request.session!.csrfToken }));
  });
}
