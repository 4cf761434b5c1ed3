import type { FastifyReply } from 'fastify';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as broadcasts from '../../domain/broadcasts/broadcasts.ts';
import { countEmailsByStatus, listRecipients } from '../../domain/broadcasts/broadcast-emails.ts';
import { findSegmentOrThrow } from '../../domain/contacts/segments.ts';
import { findTopicOrThrow } from '../../domain/contacts/topics.ts';
import { EMAIL_STATES } from '../../domain/events/email-events.ts';
import { status, when } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { messageFrame, sandboxedHtml } from '../message-view.ts';
import { pager, readPage } from '../paging.ts';

// Broadcasts: the list, and a broadcast's detail (its content, what became of its emails, and send,
// schedule or cancel), over the same domain functions as GET /broadcasts, GET /broadcasts/:id, and
// POST /broadcasts/:id/send and /cancel.

const PAGE_SIZE = 50;
const RECIPIENTS_PAGE_SIZE = 100;
type Query = Record<string, string | undefined>;

/** What the last change did, named in the redirect back: fixed messages, never text from the query. */
const NOTICES: Record<string, string> = {
  sent: 'The broadcast is on its way.',
  scheduled: 'The broadcast is scheduled.',
  canceled: 'The broadcast is canceled.',
};


/** Segment (or topic) names by id, each looked up once; a deleted one shows its id. */
async function namesOf(ids: (string | null)[], find: (id: string) => Promise<{ name: string }>): Promise<Map<string, string>> {
  const unique = [...new Set(ids.filter((id): id is string => id !== null))];
  const names = await Promise.all(unique.map((id) => find(id).then((row) => row.name, () => id)));
  return new Map(unique.map((id, i) => [id, names[i]!]));
}

function actions(broadcast: { id: string; status: string; scheduled_at: string | null }, csrfToken: string): Html {
  const csrf = html`<input type="hidden" name="_csrf" value="${csrfToken}">`;
  const action = (verb: string) => `/dashboard/broadcasts/${broadcast.id}/${verb}`;
  if (broadcast.status === 'draft') {
    return html`<section aria-labelledby="send"><h2 id="send">Send</h2>
<form class="inline" method="post" action="${action('send')}" data-confirm="Send this broadcast to its segment now?">${csrf}<button type="submit">Send now</button></form>
<form class="inline" method="post" action="${action('send')}">${csrf}<label>Send at (ISO 8601 or "in 1 hour")<input name="scheduled_at" required></label><button type="submit">Schedule</button></form></section>`;
  }
  if (broadcast.status === 'scheduled' || broadcast.status === 'queued') {
    const state = broadcast.status === 'scheduled' ? html`Scheduled for ${when(broadcast.scheduled_at)}. Canceling makes it a draft again.` : 'Queued: canceling stops it for good.';
    return html`<section aria-labelledby="cancel"><h2 id="cancel">Cancel</h2><p>${state}</p>
<form class="inline" method="post" action="${action('cancel')}" data-confirm="Cancel this broadcast?">${csrf}<button type="submit">Cancel the broadcast</button></form></section>`;
  }
  return html``;
}

function emailCounts(counts: Record<string, number>): Html {
  const present = EMAIL_STATES.filter((s) => counts[s] !== undefined);
  if (present.length === 0) return html`<p>No emails yet: they are written when the broadcast is sent.</p>`;
  const total = present.reduce((sum, s) => sum + counts[s]!, 0);
  return html`<table class="list counts"><caption class="visually-hidden">Emails by status</caption>
<thead><tr><th scope="col">Status</th><th scope="col">Emails</th></tr></thead>
<tbody>${present.map((s) => html`<tr><td>${status(s)}</td><td>${counts[s]}</td></tr>`)}<tr><td>Total</td><td>${total}</td></tr></tbody></table>`;
}

export function broadcastPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/broadcasts', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const project = request.session!.projectId;
    const result = await broadcasts.listBroadcasts(ctx, project, readPage(query, PAGE_SIZE));
    const segments = await namesOf(result.data.map((b) => b.segment_id), (id) => findSegmentOrThrow(ctx, project, id));
    const rows = result.data.length
      ? result.data.map(
          (b) => html`<tr>
<td><a href="/dashboard/broadcasts/${b.id}">${b.name || '(no name)'}</a></td>
<td>${segments.get(b.segment_id) ?? b.segment_id}</td>
<td>${status(b.status)}</td>
<td>${when(b.created_at)}</td>
<td>${when(b.scheduled_at)}</td>
<td>${when(b.sent_at)}</td>
</tr>`,
        )
      : html`<tr><td colspan="6">No broadcasts.</td></tr>`;
    const content = html`<table class="list">
<caption class="visually-hidden">Broadcasts, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Segment</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col">Scheduled</th><th scope="col">Sent</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${pager('/dashboard/broadcasts', query, result)}`;
    return reply.type('text/html; charset=utf-8').send(page('Broadcasts', content, { section: 'broadcasts', csrfToken: request.session!.csrfToken }));
  });

  app.get('/broadcasts/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Broadcast');
    const query = request.query as Query;
    const project = request.session!.projectId;
    const broadcast = await broadcasts.getBroadcast(ctx, project, id);
    const [segments, topics, counts, recipients] = await Promise.all([
      namesOf([broadcast.segment_id], (s) => findSegmentOrThrow(ctx, project, s)),
      namesOf([broadcast.topic_id], (s) => findTopicOrThrow(ctx, project, s)),
      countEmailsByStatus(ctx, project, id),
      listRecipients(ctx, project, id, readPage(query, RECIPIENTS_PAGE_SIZE)),
    ]);
    const { done: _, ...listQuery } = query;
    const content = html`<dl class="facts">
<dt>Status</dt><dd>${status(broadcast.status)}</dd>
<dt>From</dt><dd>${broadcast.from}</dd>
<dt>Subject</dt><dd>${broadcast.subject}</dd>
<dt>Segment</dt><dd>${segments.get(broadcast.segment_id)}</dd>
<dt>Topic</dt><dd>${broadcast.topic_id ? topics.get(broadcast.topic_id) : 'none'}</dd>
${broadcast.reply_to ? html`<dt>Reply-To</dt><dd>${broadcast.reply_to.join(', ')}</dd>` : ''}
${broadcast.preview_text ? html`<dt>Preview text</dt><dd>${broadcast.preview_text}</dd>` : ''}
<dt>Created</dt><dd>${when(broadcast.created_at)}</dd>
${broadcast.scheduled_at ? html`<dt>Scheduled</dt><dd>${when(broadcast.scheduled_at)}</dd>` : ''}
${broadcast.sent_at ? html`<dt>Sent</dt><dd>${when(broadcast.sent_at)}</dd>` : ''}
<dt>Id</dt><dd><code>${id}</code> <button type="button" class="secondary" data-copy="${id}">Copy</button></dd>
</dl>
${actions(broadcast, request.session!.csrfToken)}
<section aria-labelledby="emails"><h2 id="emails">Emails</h2>
${emailCounts(counts)}
${recipients.data.length ? html`<table class="list"><caption class="visually-hidden">Recipients, newest first</caption>
<thead><tr><th scope="col">Recipient</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${recipients.data.map((r) => html`<tr><td><a href="/dashboard/emails/${r.id}">${r.email}</a></td><td>${status(r.last_event)}</td><td>${when(r.created_at)}</td></tr>`)}</tbody></table>
${pager(`/dashboard/broadcasts/${id}`, listQuery, recipients)}` : ''}</section>
${messageFrame(`/dashboard/broadcasts/${id}/html`, broadcast.html)}
${broadcast.text ? html`<section aria-labelledby="text"><h2 id="text">Text</h2><pre class="text">${broadcast.text}</pre></section>` : ''}`;
    const title = broadcast.name || broadcast.subject || '(no name)';
    const notice = query.done ? NOTICES[query.done] : undefined;
    return reply.type('text/html; charset=utf-8').send(page(title, content, { section: 'broadcasts', csrfToken: request.session!.csrfToken, notice }));
  });

  app.get('/broadcasts/:id/html', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const broadcast = await broadcasts.getBroadcast(ctx, request.session!.projectId, pathId(request, 'id', 'Broadcast'));
    return sandboxedHtml(reply, broadcast.html ?? '', (request.query as Query).images === 'show');
  });

  app.post('/broadcasts/:id/send', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Broadcast');
    const scheduledAt = (request.body as Query).scheduled_at?.trim() || undefined;
    await broadcasts.sendBroadcast(ctx, request.session!.projectId, id, scheduledAt);
    return back(reply, id, scheduledAt ? 'scheduled' : 'sent');
  });

  app.post('/broadcasts/:id/cancel', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Broadcast');
    await broadcasts.cancelBroadcast(ctx, request.session!.projectId, id);
    return back(reply, id, 'canceled');
  });
}


/** After a change: back to the broadcast's page (POST, then GET), saying what was done. */
const back = (reply: FastifyReply, id: string, notice: keyof typeof NOTICES) => reply.redirect(`/dashboard/broadcasts/${id}?done=${notice}`, 303);
