import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { tlsFigures, type TlsDay, type TlsDomainFigures } from '../../domain/tls-reports/tls-figures.ts';
import { toTimestamp } from '../../time/clock.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { status, when } from '../page-parts.ts';

// TLS to recipients (docs/reports.md): per recipient domain over 30 days, the sessions of direct
// delivery that succeeded and failed (by RFC 8460 result type), the MTA-STS policy in force, and for
// each day whether its TLS report was made.

const DAYS = 30;
const DOMAINS = 100;

const failureList = (failures: Record<string, number>) =>
  html`${Object.entries(failures).map(([type, count], i) => html`${i > 0 ? html`<br>` : ''}${type}: ${count}`)}`;

const policyOf = (figures: TlsDomainFigures, now: number) =>
  figures.policy
    ? html`${status(figures.policy.mode)}${figures.policy.expires_at < now ? ' (expired)' : html` until ${when(toTimestamp(figures.policy.expires_at))}`}`
    : 'none kept';

/** A day's report: made, and where it went; none asked for; or not yet (the day has not ended long enough). */
function reportOf(day: TlsDay): Html {
  if (!day.report) return html`not yet`;
  if (day.report.rua === 'none published') return html`none: the domain asks for no report`;
  return html`sent ${when(day.report.created_at)} to <code>${day.report.rua}</code>`;
}

function domainSection(figures: TlsDomainFigures): Html {
  return html`<details id="tls-${figures.domain}"><summary>${figures.domain}: each day</summary>
<table class="list">
<caption class="visually-hidden">Sessions to ${figures.domain} per day, and the day's report</caption>
<thead><tr><th scope="col">Day (UTC)</th><th scope="col">Successful</th><th scope="col">Failed</th><th scope="col">Report</th></tr></thead>
<tbody>${[...figures.days].reverse().map(
    (day) => html`<tr><th scope="row">${day.day}</th><td>${day.successful}</td><td>${day.failed}</td><td>${reportOf(day)}</td></tr>`,
  )}</tbody>
</table></details>`;
}

export function tlsPages(app: App, ctx: Context): void {
  // Sessions per recipient domain are the install's, every project's mail: the operator's page.
  const dashboard = { access: 'dashboard' as const, needs: 'operator' as const };

  app.get('/tls', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const figures = await tlsFigures(ctx, DAYS, DOMAINS);
    const now = ctx.clock.now();
    const content = html`<p>Direct delivery's TLS sessions over the last ${DAYS} days (UTC), per recipient domain that publishes an MTA-STS policy: those its TLS reports count (<a href="https://www.rfc-editor.org/rfc/rfc8460">RFC 8460</a>).${
      figures.counting ? '' : html` <strong id="not-counting">Nothing is counted now: sessions are counted in direct mode (<code>DELIVERY_MODE=direct</code>) with <code>MAILROOM_TLSRPT</code> on.</strong>`
    }</p>
<table class="list" id="tls-domains">
<caption class="visually-hidden">Sessions per recipient domain</caption>
<thead><tr><th scope="col">Recipient domain</th><th scope="col">MTA-STS policy</th><th scope="col">Successful</th><th scope="col">Failed</th><th scope="col">Failures by type</th><th scope="col">Days reported</th></tr></thead>
<tbody>${
      figures.domains.length === 0
        ? html`<tr><td colspan="6">No session counted.</td></tr>`
        : figures.domains.map(
            (d) => html`<tr>
<th scope="row"><a href="#tls-${d.domain}">${d.domain}</a></th><td>${policyOf(d, now)}</td><td>${d.successful}</td><td>${d.failed}</td><td>${failureList(d.failures)}</td>
<td>${d.days.filter((day) => day.report).length} of ${d.days.length}</td>
</tr>`,
          )
    }</tbody>
</table>
${figures.has_more ? html`<p>The ${DOMAINS} domains with the most sessions are shown.</p>` : ''}
${figures.domains.map(domainSection)}`;
    return reply.type('text/html; charset=utf-8').send(page('TLS to recipients', content, { section: 'tls', csrfToken: request.signedIn!.csrfToken }));
  });
}
