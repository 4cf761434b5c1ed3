import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import { deliveryPaused } from '../../monitoring/health.ts';
import type { Context } from '../../context.ts';
import * as emails from '../../domain/emails/emails.ts';
import { splitMessage } from '../../domain/emails/header-block.ts';
import { listEmailAttachments } from '../../domain/emails/sent-attachments.ts';
import { listEmailDeliveries } from '../../domain/webhooks/deliveries.ts';
import { EMAIL_STATES } from '../../domain/events/email-events.ts';
import type { EmailFilter } from '../../store/emails.ts';
import { status, when } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { headerTable, messageFrame, removedBody, sandboxedHtml } from '../message-view.ts';
import { pager, readPage } from '../paging.ts';

// Emails: the list (newest first, filtered, refreshed live) and an email's detail, over the same
// domain functions as GET /emails, GET /emails/:id, /raw, /events, /attachments, cancel and PATCH.

const PAGE_SIZE = 50;
type Query = Record<string, string | undefined>;

/** The list's filters from the query string: only known statuses, dates as Resend's timestamps. */
function filterOf(query: Query): EmailFilter {
  const day = (value: string | undefined) => (value && /^\d{4}-\d{2}-\d{2}$/.test(value) ? value : undefined);
  const since = day(query.since);
  const until = day(query.until);
  return {
    status: query.status && (EMAIL_STATES as readonly string[]).includes(query.status) ? query.status : undefined,
    recipient: query.recipient?.trim() || undefined,
    subject: query.subject?.trim() || undefined,
    tag: query.tag?.trim() || undefined,
    since,
    // The whole of the `until` day.
    until: until && new Date(Date.parse(`${until}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10),
  };
}

function rows(list: Awaited<ReturnType<typeof emails.listEmails>>['data']): Html {
  if (list.length === 0) return html`<tr><td colspan="4">No emails.</td></tr>`;
  return html`${list.map(
    (e) => html`<tr>
<td><a href="/dashboard/emails/${e.id}">${e.subject || '(no subject)'}</a></td>
<td>${e.to.join(', ')}</td>
<td>${status(e.last_event)}</td>
<td>${when(e.created_at)}</td>
</tr>`,
  )}`;
}

function filterForm(query: Query): Html {
  const field = (name: string, label: string, type = 'text') =>
    html`<label>${label}<input type="${type}" name="${name}" value="${query[name] ?? ''}"></label>`;
  return html`<form class="filters" method="get" action="/dashboard/emails">
<label>Status<select name="status"><option value="">any</option>${EMAIL_STATES.map(
    (s) => html`<option value="${s}"${query.status === s ? html` selected` : ''}>${s.replaceAll('_', ' ')}</option>`,
  )}</select></label>
${field('recipient', 'Recipient')}${field('subject', 'Subject')}${field('tag', 'Tag (name or name:value)')}
${field('since', 'From', 'date')}${field('until', 'To', 'date')}
<button type="submit">Filter</button> <a href="/dashboard/emails">Clear</a>
</form>`;
}

export function emailPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  async function list(request: FastifyRequest) {
    const query = request.query as Query;
    const result = await emails.listEmails(ctx, request.session!.projectId, readPage(query, PAGE_SIZE), filterOf(query));
    return { query, result };
  }

  app.get('/emails', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const [{ query, result }, paused] = await Promise.all([list(request), deliveryPaused(ctx)]);
    const live = query.after === undefined && query.before === undefined;
    const content = html`${filterForm(query)}
<table class="list"${live ? html` data-live="/dashboard/emails/rows${request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''}"` : ''}>
<caption class="visually-hidden">Emails, newest first</caption>
<thead><tr><th scope="col">Subject</th><th scope="col">To</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${rows(result.data)}</tbody>
</table>
${pager('/dashboard/emails', query, result)}`;
    // The workers' word that nothing goes out now, and why (GET /health says the same).
    const notice = paused && `Delivery is paused. ${paused}`;
    return reply.type('text/html; charset=utf-8').send(page('Emails', content, { section: 'emails', csrfToken: request.session!.csrfToken, notice }));
  });

  // The rows alone, for the live refresh of the first page.
  app.get('/emails/rows', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const { result } = await list(request);
    return reply.type('text/html; charset=utf-8').send(rows(result.data).text);
  });

  app.get('/emails/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    const email = await emails.getEmail(ctx, request.session!.projectId, id);
    const [events, deliveries, attachments, raw] = await Promise.all([
      emails.listEmailEvents(ctx, request.session!.projectId, id),
      listEmailDeliveries(ctx, id),
      listEmailAttachments(ctx, request.session!.projectId, id, { limit: 100, after: undefined, before: undefined }),
      emails.getRawMessage(ctx, request.session!.projectId, id).catch(() => undefined),
    ]);
    const csrf = html`<input type="hidden" name="_csrf" value="${request.session!.csrfToken}">`;
    const scheduled =
      email.last_event === 'scheduled'
        ? html`<section aria-labelledby="schedule"><h2 id="schedule">Scheduled for ${email.scheduled_at}</h2>
<form method="post" action="/dashboard/emails/${id}/reschedule">${csrf}<label>New time (ISO 8601 or "in 1 hour")<input name="scheduled_at" required></label><button type="submit">Reschedule</button></form>
<form method="post" action="/dashboard/emails/${id}/cancel">${csrf}<button type="submit">Cancel this email</button></form></section>`
        : '';
    const content = html`<dl class="facts">
<dt>Status</dt><dd>${status(email.last_event)}</dd>
<dt>From</dt><dd>${email.from}</dd>
<dt>To</dt><dd>${email.to.join(', ')}</dd>
${email.cc.length ? html`<dt>Cc</dt><dd>${email.cc.join(', ')}</dd>` : ''}
${email.bcc.length ? html`<dt>Bcc</dt><dd>${email.bcc.join(', ')}</dd>` : ''}
<dt>Created</dt><dd>${email.created_at}</dd>
<dt>Message-ID</dt><dd><code>${email.message_id}</code></dd>
${email.tags.length ? html`<dt>Tags</dt><dd>${email.tags.map((t) => html`<span class="tag">${t.name}${t.value ? `: ${t.value}` : ''}</span> `)}</dd>` : ''}
<dt>Id</dt><dd><code>${id}</code></dd>
</dl>
${scheduled}
${email.body_removed_at ? removedBody(ctx.config.retentionDays) : messageFrame(`/dashboard/emails/${id}/html`, email.html)}
${email.text !== null ? html`<section aria-labelledby="text"><h2 id="text">Text</h2><pre class="text">${email.text}</pre></section>` : ''}
<section aria-labelledby="timeline"><h2 id="timeline">Timeline</h2>
<ol class="timeline">${events.data.map(
      (e) =>
        html`<li${e.bot ? html` class="bot"` : ''}>${when(e.created_at)} ${status(e.type)}${e.bot ? html` <span class="status status-bot">bot</span>` : ''}${e.recipient ? html` <span>${e.recipient}</span>` : ''}${e.link ? html`<br><code class="link">${e.link}</code>` : ''}${e.response ? html`<br><code>${e.response}</code>` : ''}</li>`,
    )}</ol></section>
${deliveries.length ? html`<section aria-labelledby="webhooks"><h2 id="webhooks">Webhooks</h2><ul class="timeline">${deliveries.map(
      (d) => html`<li><a href="/dashboard/webhooks/${d.webhook_id}/events/${d.event_id}">${d.type}</a> to <code>${d.endpoint}</code> ${status(d.status)}${d.attempts.map(
        (a) => html`<br>${when(a.sent_at)} ${a.http_status_code ?? ''} ${a.error ?? ''}`,
      )}</li>`,
    )}</ul></section>` : ''}
${attachments.data.length ? html`<section aria-labelledby="attachments"><h2 id="attachments">Attachments</h2><ul>${attachments.data.map((a) => html`<li><a href="${a.download_url}">${a.filename ?? a.id}</a> (${a.content_type}, ${a.size} bytes)</li>`)}</ul></section>` : ''}
${raw ? headerTable(splitMessage(raw).fields.filter((f) => f.name).map((f) => [f.name, f.value])) : ''}
${raw ? html`<section aria-labelledby="source"><h2 id="source">Source</h2><p><a href="/dashboard/emails/${id}/raw" download="${id}.eml">Download the .eml</a></p><pre class="source">${raw.toString('utf8')}</pre></section>` : ''}`;
    return reply.type('text/html; charset=utf-8').send(page(email.subject || '(no subject)', content, { section: 'emails', csrfToken: request.session!.csrfToken }));
  });

  app.get('/emails/:id/html', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const email = await emails.getEmail(ctx, request.session!.projectId, pathId(request, 'id', 'Email'));
    return sandboxedHtml(reply, email.html ?? '', (request.query as Query).images === 'show');
  });

  app.get('/emails/:id/raw', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    const raw = await emails.getRawMessage(ctx, request.session!.projectId, id);
    return reply.type('message/rfc822').header('content-disposition', `attachment; filename="${id}.eml"`).send(raw);
  });

  app.post('/emails/:id/cancel', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    await emails.cancelEmail(ctx, request.session!.projectId, id);
    return back(reply, `/dashboard/emails/${id}`);
  });

  app.post('/emails/:id/reschedule', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    await emails.rescheduleEmail(ctx, request.session!.projectId, id, (request.body as Query).scheduled_at);
    return back(reply, `/dashboard/emails/${id}`);
  });
}


/** After a change: back to the page it was made on (POST, then GET). */
const back = (reply: FastifyReply, to: string) => reply.redirect(to, 303);
