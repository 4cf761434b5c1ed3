import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { lastFeedback } from '../../domain/feedback/feedback.ts';
import * as domains from '../../domain/sending-domains/domains.ts';
import { status, when } from '../page-parts.ts';
import { afterResume, pauseBanner, RESUMED } from '../pause-banner.ts';
import { pathId } from '../path-id.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { pager, readPage } from '../paging.ts';

// Domains: the list with each status, a form that adds one, and a domain's detail with the DNS records
// to publish, a Verify button, the guards' pause with a Resume button (pause-banner.ts) and a link to its
// deliverability page (domain-deliverability.ts); the domain functions of GET
// and POST /domains, POST /domains/:id/verify and PATCH /domains/:id {sending_paused: false}.

const PAGE_SIZE = 50;
/** What the last change did, named in the redirect: fixed texts only. */
const NOTICES: Record<string, string> = {
  created: 'Domain added: publish these records at your DNS provider, then verify.',
  verifying: 'Looking the records up now, then again for 72 hours until they are all found. Reload to see the status.',
  resumed: RESUMED,
};
type Query = Record<string, string | undefined>;


function rows(list: Awaited<ReturnType<typeof domains.listDomains>>['data']): Html {
  if (list.length === 0) return html`<tr><td colspan="4">No domains yet.</td></tr>`;
  return html`${list.map(
    (d) => html`<tr>
<td><a href="/dashboard/domains/${d.id}">${d.name}</a></td>
<td>${status(d.status)}</td>
<td>${[d.capabilities.sending === 'enabled' ? 'sending' : '', d.capabilities.receiving === 'enabled' ? 'receiving' : ''].filter(Boolean).join(', ')}</td>
<td>${when(d.created_at)}</td>
</tr>`,
  )}`;
}

function recordTable(records: Awaited<ReturnType<typeof domains.getDomain>>['records']): Html {
  return html`<table class="list records">
<caption class="visually-hidden">DNS records to publish</caption>
<thead><tr><th scope="col">Record</th><th scope="col">Type</th><th scope="col">Name</th><th scope="col">Value</th><th scope="col">Priority</th><th scope="col">Status</th></tr></thead>
<tbody>${records.map(
    (r) => html`<tr>
<td>${r.record}</td>
<td>${r.type}</td>
<td><code>${r.name}</code></td>
<td><code class="record-value">${r.value}</code> <button type="button" class="secondary" data-copy="${r.value}" aria-label="Copy the ${r.record} ${r.type} value">Copy</button></td>
<td>${r.priority ?? ''}</td>
<td>${status(r.status)}</td>
</tr>`,
  )}</tbody></table>`;
}

export function domainPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/domains', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const csrfToken = request.session!.csrfToken;
    const result = await domains.listDomains(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const content = html`<form class="inline" method="post" action="/dashboard/domains">
<input type="hidden" name="_csrf" value="${csrfToken}">
<label>Domain name<input name="name" required placeholder="example.com" autocomplete="off"></label>
<label class="check"><input type="checkbox" name="receiving" value="enabled"> Receives mail too</label>
<button type="submit">Add domain</button>
</form>
<table class="list">
<caption class="visually-hidden">Domains</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Capabilities</th><th scope="col">Added</th></tr></thead>
<tbody>${rows(result.data)}</tbody>
</table>
${pager('/dashboard/domains', query, result)}`;
    return reply.type('text/html; charset=utf-8').send(page('Domains', content, { section: 'domains', csrfToken }));
  });

  app.post('/domains', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const form = request.body as Query;
    const created = await domains.createDomain(ctx, request.session!.projectId, { name: form.name ?? '', capabilities: form.receiving === 'enabled' ? { receiving: 'enabled' } : undefined });
    return reply.redirect(`/dashboard/domains/${created.id}?done=created`, 303);
  });

  app.get('/domains/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const csrfToken = request.session!.csrfToken;
    const domain = await domains.getDomain(ctx, request.session!.projectId, pathId(request, 'id', 'Domain'));
    const feedback = await lastFeedback(ctx, domain.name);
    const content = html`${pauseBanner(domain, csrfToken, 'domain')}<dl class="facts">
<dt>Status</dt><dd>${status(domain.status)}</dd>
<dt>Sending</dt><dd>${domain.capabilities.sending}</dd>
<dt>Receiving</dt><dd>${domain.capabilities.receiving}</dd>
<dt>Return path</dt><dd><code>${domain.custom_return_path}.${domain.name}</code></dd>
<dt>TLS</dt><dd>${domain.tls}</dd>
<dt>Tracking</dt><dd>opens ${domain.open_tracking ? 'on' : 'off'}, clicks ${domain.click_tracking ? 'on' : 'off'}</dd>
<dt>Region</dt><dd>${domain.region}</dd>
<dt>Added</dt><dd>${when(domain.created_at)}</dd>
<dt>Deliverability</dt><dd><a href="/dashboard/domains/${domain.id}/deliverability">Checks, fixes and rates</a></dd>
<dt>DMARC reports</dt><dd><a href="/dashboard/domains/${domain.id}/dmarc">${domain.dmarc_reports ? html`Sources and reports (read at ${domain.dmarc_reports.address})` : 'Sources and reports (no report address yet)'}</a></dd>
<dt>Last feedback</dt><dd>${feedback ? html`${feedback.source}, ${when(feedback.at)}` : 'none yet'}</dd>
<dt>Id</dt><dd><code>${domain.id}</code></dd>
</dl>
<form class="inline" method="post" action="/dashboard/domains/${domain.id}/verify">
<input type="hidden" name="_csrf" value="${csrfToken}"><button type="submit">Verify</button>
</form>
<section aria-labelledby="records"><h2 id="records">DNS records</h2>
<p>Publish these at your DNS provider; names are relative to ${domain.name} (<code>@</code> is the domain itself).</p>
${recordTable(domain.records)}</section>`;
    const notice = query.done ? NOTICES[query.done] : undefined;
    return reply.type('text/html; charset=utf-8').send(page(domain.name, content, { section: 'domains', csrfToken, notice }));
  });

  app.post('/domains/:id/resume', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Domain');
    const back = (request.body as Query).back;
    await domains.updateDomain(ctx, request.session!.projectId, id, { sending_paused: false });
    return reply.redirect(afterResume(id, back), 303);
  });

  app.post('/domains/:id/verify', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Domain');
    await domains.verifyDomain(ctx, request.session!.projectId, id);
    return reply.redirect(`/dashboard/domains/${id}?done=verifying`, 303);
  });
}

