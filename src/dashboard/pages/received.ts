import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { notFound } from '../../errors.ts';
import * as received from '../../domain/receiving/received-emails.ts';
import { pathId } from '../path-id.ts';
import { when } from '../page-parts.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { headerTable, messageFrame, removedBody, sandboxedHtml } from '../message-view.ts';
import { pager, readPage } from '../paging.ts';

// Received emails: the list (newest first) and a message's detail, over the same domain functions as
// GET /emails/receiving, GET /emails/receiving/:id, its attachments and its raw download.

const PAGE_SIZE = 50;
/** The source shown on the page stops here (a message may be megabytes); the .eml download has it all. */
const SOURCE_CHARS = 200_000;
type Query = Record<string, string | undefined>;


/** An SPF, DKIM or DMARC result as mailauth words it (pass, fail, softfail, neutral, none, temperror, permerror). */
const verdict = (result: string) => html`<span class="status status-auth-${result}">${result}</span>`;

function rows(list: Awaited<ReturnType<typeof received.listReceivedEmails>>['data']): Html {
  if (list.length === 0) return html`<tr><td colspan="5">No received emails.</td></tr>`;
  return html`${list.map(
    (e) => html`<tr>
<td><a href="/dashboard/received/${e.id}">${e.subject || '(no subject)'}</a></td>
<td>${e.from}</td>
<td>${e.to.join(', ')}</td>
<td>${e.attachments.length || ''}</td>
<td>${when(e.created_at)}</td>
</tr>`,
  )}`;
}

function authentication(auth: { spf: string; dkim: string; dmarc: string } | null): Html {
  const results = auth
    ? html`<dl class="facts auth"><dt>SPF</dt><dd>${verdict(auth.spf)}</dd><dt>DKIM</dt><dd>${verdict(auth.dkim)}</dd><dt>DMARC</dt><dd>${verdict(auth.dmarc)}</dd></dl>`
    : html`<p>Not checked.</p>`;
  return html`<section aria-labelledby="authentication"><h2 id="authentication">Authentication</h2>${results}</section>`;
}

export function receivedPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/received', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const result = await received.listReceivedEmails(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const content = html`<table class="list">
<caption class="visually-hidden">Received emails, newest first</caption>
<thead><tr><th scope="col">Subject</th><th scope="col">From</th><th scope="col">To</th><th scope="col">Attachments</th><th scope="col">Received</th></tr></thead>
<tbody>${rows(result.data)}</tbody>
</table>
${pager('/dashboard/received', query, result)}`;
    return reply.type('text/html; charset=utf-8').send(page('Received', content, { section: 'received', csrfToken: request.session!.csrfToken }));
  });

  app.get('/received/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    const project = request.session!.projectId;
    const email = await received.getReceivedEmail(ctx, project, id);
    const [attachments, raw] = await Promise.all([
      received.listReceivedAttachments(ctx, project, id, { limit: 100, after: undefined, before: undefined }),
      email.body_removed_at ? undefined : received.loadReceivedMessage(ctx, id),
    ]);
    const source = raw?.bytes.toString('utf8');
    const content = html`<dl class="facts">
<dt>From</dt><dd>${email.from}</dd>
<dt>To</dt><dd>${email.to.join(', ')}</dd>
${email.cc.length ? html`<dt>Cc</dt><dd>${email.cc.join(', ')}</dd>` : ''}
${email.reply_to.length ? html`<dt>Reply-To</dt><dd>${email.reply_to.join(', ')}</dd>` : ''}
<dt>Subject</dt><dd>${email.subject || '(no subject)'}</dd>
<dt>Received for</dt><dd>${email.received_for.join(', ')}</dd>
<dt>Received</dt><dd>${when(email.created_at)}</dd>
<dt>Message-ID</dt><dd><code>${email.message_id}</code></dd>
<dt>Id</dt><dd><code>${id}</code></dd>
</dl>
${authentication(email.authentication)}
${email.body_removed_at ? removedBody(ctx.config.retentionDays) : messageFrame(`/dashboard/received/${id}/html`, email.html)}
${email.text !== null ? html`<section aria-labelledby="text"><h2 id="text">Text</h2><pre class="text">${email.text}</pre></section>` : ''}
${attachments.data.length ? html`<section aria-labelledby="attachments"><h2 id="attachments">Attachments</h2><ul>${attachments.data.map((a) => html`<li><a href="${a.download_url}">${a.filename ?? a.id}</a> (${a.content_type}, ${a.size} bytes${a.content_disposition === 'inline' ? ', inline' : ''})</li>`)}</ul></section>` : ''}
${headerTable(Object.entries(email.headers))}
${source !== undefined ? html`<section aria-labelledby="source"><h2 id="source">Source</h2><p><a href="/dashboard/received/${id}/raw" download="${id}.eml">Download the .eml</a></p><pre class="source">${source.slice(0, SOURCE_CHARS)}</pre>${source.length > SOURCE_CHARS ? html`<p>Cut short: the .eml has the whole message.</p>` : ''}</section>` : ''}`;
    return reply.type('text/html; charset=utf-8').send(page(email.subject || '(no subject)', content, { section: 'received', csrfToken: request.session!.csrfToken }));
  });

  app.get('/received/:id/html', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const email = await received.getReceivedEmail(ctx, request.session!.projectId, pathId(request, 'id', 'Email'));
    return sandboxedHtml(reply, email.html ?? '', (request.query as Query).images === 'show');
  });

  app.get('/received/:id/raw', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Email');
    const file = await received.getReceivedMessage(ctx, request.session!.projectId, id);
    if (!file) throw notFound('Email');
    return reply.type(file.contentType).header('content-disposition', `attachment; filename="${id}.eml"`).send(file.bytes);
  });
}

