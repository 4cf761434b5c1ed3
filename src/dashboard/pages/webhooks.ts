import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { listWebhookEvents } from '../../domain/webhooks/deliveries.ts';
import * as webhooks from '../../domain/webhooks/endpoints.ts';
import { WEBHOOK_EVENT_TYPES } from '../../domain/webhooks/event-types.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { pager, readPage } from '../paging.ts';
import { pathId } from '../path-id.ts';
import { csrfField, status, when } from '../page-parts.ts';
import { webhookDeliveryPages } from './webhook-deliveries.ts';

// Webhooks: the endpoints, a new one, and an endpoint's page (its events, status, signing secret and
// delivery log), over the domain functions of /webhooks and /webhooks/:id/events.

const PAGE_SIZE = 50;
const HTML = 'text/html; charset=utf-8';
type Query = Record<string, string | undefined>;

/** Notices after a redirect, by code: the query string never carries the text itself. */
const NOTICES: Record<string, string> = {
  created: 'The webhook was created: events are posted to it from now on.',
  enabled: 'The webhook is enabled.',
  disabled: 'The webhook is disabled: no event is posted to it.',
  rotated: 'The signing secret was replaced: the old one no longer verifies.',
  deleted: 'The webhook was deleted.',
};
const noticeOf = (query: Query) => (query.done ? NOTICES[query.done] : undefined);

// A form body keeps one value per name, so each event type is a checkbox of its own name.
const checkboxName = (type: string) => `event:${type}`;

function createForm(request: FastifyRequest): Html {
  return html`<section aria-labelledby="new-webhook"><h2 id="new-webhook">New webhook</h2>
<form class="webhook" method="post" action="/dashboard/webhooks">${csrfField(request)}
<label>Endpoint URL<input type="url" name="endpoint" required placeholder="https://example.com/webhooks"></label>
<fieldset><legend>Events</legend><div class="event-types">${WEBHOOK_EVENT_TYPES.map(
    (type) => html`<label class="check"><input type="checkbox" name="${checkboxName(type)}"> ${type}</label>`,
  )}</div></fieldset>
<button type="submit">Create webhook</button>
</form></section>`;
}

export function webhookPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const }, schema: { hide: true } };
  const send = (request: FastifyRequest, title: string, content: Html, notice?: string) =>
    page(title, content, { section: 'webhooks', csrfToken: request.session!.csrfToken, notice });

  app.get('/webhooks', route, async (request, reply) => {
    const query = request.query as Query;
    const list = await webhooks.listWebhooks(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const content = html`<table class="list">
<caption class="visually-hidden">Webhooks, newest first</caption>
<thead><tr><th scope="col">Endpoint</th><th scope="col">Events</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${
      list.data.length === 0
        ? html`<tr><td colspan="4">No webhooks.</td></tr>`
        : list.data.map(
            (w) => html`<tr><td><a href="/dashboard/webhooks/${w.id}">${w.endpoint}</a></td><td>${w.events.map((e) => html`<span class="tag">${e}</span> `)}</td><td>${status(w.status)}</td><td>${when(w.created_at)}</td></tr>`,
          )
    }</tbody>
</table>
${pager('/dashboard/webhooks', query, list)}
${createForm(request)}`;
    return reply.type(HTML).send(send(request, 'Webhooks', content, noticeOf(query)));
  });

  app.post('/webhooks', route, async (request, reply) => {
    const form = request.body as Query;
    const events = WEBHOOK_EVENT_TYPES.filter((type) => form[checkboxName(type)] !== undefined);
    const { id } = await webhooks.createWebhook(ctx, request.session!.projectId, { endpoint: form.endpoint ?? '', events });
    return reply.redirect(`/dashboard/webhooks/${id}?done=created`, 303);
  });

  app.get('/webhooks/:id', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Webhook');
    const query = request.query as Query;
    const [webhook, deliveries] = await Promise.all([webhooks.getWebhook(ctx, request.session!.projectId, id), listWebhookEvents(ctx, request.session!.projectId, id, readPage(query, PAGE_SIZE))]);
    const enabled = webhook.status === 'enabled';
    const action = (path: string, label: string, confirm?: string) =>
      html`<form class="inline" method="post" action="/dashboard/webhooks/${id}/${path}"${confirm ? html` data-confirm="${confirm}"` : ''}>${csrfField(request)}<button type="submit" class="secondary">${label}</button></form>`;
    const content = html`<dl class="facts">
<dt>Status</dt><dd>${status(webhook.status)}${'disabled_reason' in webhook && webhook.disabled_reason ? html` <span>${webhook.disabled_reason}</span>` : ''}</dd>
<dt>Events</dt><dd>${webhook.events.map((e) => html`<span class="tag">${e}</span> `)}</dd>
<dt>Created</dt><dd>${when(webhook.created_at)}</dd>
<dt>Signing secret</dt><dd><code>${webhook.signing_secret}</code> <button type="button" data-copy="${webhook.signing_secret}">Copy</button></dd>
<dt>Id</dt><dd><code>${id}</code></dd>
</dl>
<div class="actions">
${enabled ? action('disable', 'Disable') : action('enable', 'Enable')}
${action('rotate', 'Rotate signing secret', 'Replace the signing secret? The old one stops verifying at once.')}
${action('delete', 'Delete webhook', 'Delete this webhook and its delivery log?')}
</div>
<section aria-labelledby="deliveries"><h2 id="deliveries">Deliveries</h2>
<table class="list">
<caption class="visually-hidden">Events sent to this webhook, newest first</caption>
<thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
<tbody>${
      deliveries.data.length === 0
        ? html`<tr><td colspan="3">No events yet.</td></tr>`
        : deliveries.data.map(
            (e) => html`<tr><td><a href="/dashboard/webhooks/${id}/events/${e.id}">${e.type}</a></td><td>${status(e.status)}</td><td>${when(e.created_at)}</td></tr>`,
          )
    }</tbody>
</table>
${pager(`/dashboard/webhooks/${id}`, query, deliveries)}
</section>`;
    return reply.type(HTML).send(send(request, webhook.endpoint, content, noticeOf(query)));
  });

  for (const status of ['enabled', 'disabled'] as const) {
    app.post(`/webhooks/:id/${status === 'enabled' ? 'enable' : 'disable'}`, route, async (request, reply) => {
      const id = pathId(request, 'id', 'Webhook');
      await webhooks.updateWebhook(ctx, request.session!.projectId, id, { status });
      return reply.redirect(`/dashboard/webhooks/${id}?done=${status}`, 303);
    });
  }

  // The new secret is shown on the webhook's page, as GET /webhooks/:id shows it.
  app.post('/webhooks/:id/rotate', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Webhook');
    await webhooks.rotateSigningSecret(ctx, request.session!.projectId, id);
    return reply.redirect(`/dashboard/webhooks/${id}?done=rotated`, 303);
  });

  app.post('/webhooks/:id/delete', route, async (request, reply) => {
    await webhooks.deleteWebhook(ctx, request.session!.projectId, pathId(request, 'id', 'Webhook'));
    return reply.redirect('/dashboard/webhooks?done=deleted', 303);
  });

  webhookDeliveryPages(app, ctx);
}
