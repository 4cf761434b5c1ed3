import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as deliveries from '../../domain/webhooks/deliveries.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { pathId } from '../path-id.ts';
import { csrfField, status, when } from '../page-parts.ts';

// One event as a webhook got it: its payload, every attempt to post it, and Replay. Over the domain
// functions of GET /webhooks/:id/events/:event_id, its /attempts and /replay.

/** Attempts shown: an event is tried at most eight times, plus its replays. */
const ATTEMPTS = 100;

export function webhookDeliveryPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const }, schema: { hide: true } };

  app.get('/webhooks/:id/events/:event_id', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Webhook');
    const eventId = pathId(request, 'event_id', 'Webhook event');
    const event = await deliveries.getWebhookEvent(ctx, request.session!.projectId, id, eventId);
    const attempts = await deliveries.listWebhookAttempts(ctx, request.session!.projectId, id, eventId, { limit: ATTEMPTS, after: undefined, before: undefined });
    const replayed = (request.query as { done?: string }).done === 'replayed';
    const content = html`<p><a href="/dashboard/webhooks/${id}">Back to the webhook</a></p>
<dl class="facts">
<dt>Status</dt><dd>${status(event.status)}</dd>
<dt>Created</dt><dd>${when(event.created_at)}</dd>
${event.next_attempt_at ? html`<dt>Next attempt</dt><dd>${when(event.next_attempt_at)}</dd>` : ''}
<dt>Event id</dt><dd><code>${eventId}</code></dd>
</dl>
<form class="inline" method="post" action="/dashboard/webhooks/${id}/events/${eventId}/replay">${csrfField(request)}<button type="submit">Replay</button></form>
<section aria-labelledby="attempts"><h2 id="attempts">Attempts</h2>
<table class="list">
<caption class="visually-hidden">Attempts to post this event, newest first</caption>
<thead><tr><th scope="col">Time</th><th scope="col">HTTP status</th><th scope="col">Error</th><th scope="col">Duration</th><th scope="col">Response</th></tr></thead>
<tbody>${
      attempts.data.length === 0
        ? html`<tr><td colspan="5">No attempt yet.</td></tr>`
        : attempts.data.map(
            (a) => html`<tr>
<td>${when(a.sent_at)}</td>
<td>${a.http_status_code === null ? '' : html`<span class="status ${a.http_status_code < 300 ? 'status-success' : 'status-failed'}">${a.http_status_code}</span>`}</td>
<td>${a.error ?? ''}</td>
<td>${a.duration_ms} ms</td>
<td>${a.response ? html`<code>${a.response}</code>` : ''}</td>
</tr>`,
          )
    }</tbody>
</table></section>
<section aria-labelledby="payload"><h2 id="payload">Payload</h2><pre>${JSON.stringify(event.payload, null, 2)}</pre></section>`;
    const notice = replayed ? 'The event is being sent again.' : undefined;
    return reply.type('text/html; charset=utf-8').send(page(event.type, content, { section: 'webhooks', csrfToken: request.session!.csrfToken, notice }));
  });

  app.post('/webhooks/:id/events/:event_id/replay', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Webhook');
    const eventId = pathId(request, 'event_id', 'Webhook event');
    await deliveries.replayWebhookEvent(ctx, request.session!.projectId, id, eventId);
    return reply.redirect(`/dashboard/webhooks/${id}/events/${eventId}?done=replayed`, 303);
  });
}
