import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as apiKeys from '../../domain/api-keys/api-keys.ts';
import { listDomains } from '../../domain/sending-domains/domains.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { csrfField, when } from '../page-parts.ts';
import { pager, readPage } from '../paging.ts';
import { pathId } from '../path-id.ts';

// API keys: the list, a new key (its token shown once, on the answer to the POST itself, so that it is
// never in a URL, a redirect or a cache), and deletion. Over the domain functions of /api-keys.

const PAGE_SIZE = 50;
/** The domains a sending key can be bound to, in the create form. */
const DOMAIN_CHOICES = 100;
const HTML = 'text/html; charset=utf-8';
type Query = Record<string, string | undefined>;

/** Notices after a redirect, by code: the query string never carries the text itself. */
const NOTICES: Record<string, string> = { deleted: 'The API key was deleted.' };


type Key = Awaited<ReturnType<typeof apiKeys.listApiKeys>>['data'][number];

function rows(request: FastifyRequest, keys: Key[], domainNames: Map<string, string>): Html {
  if (keys.length === 0) return html`<tr><td colspan="6">No API keys.</td></tr>`;
  return html`${keys.map((key) => {
    const own = key.id === request.session!.apiKeyId;
    const confirm = own ? `Delete "${key.name}", the key you signed in with? You will be signed out.` : `Delete the API key "${key.name}"? Applications using it will be refused.`;
    return html`<tr>
<td>${key.name}${own ? html` <span class="tag">this session</span>` : ''}</td>
<td>${key.permission.replace('_', ' ')}</td>
<td>${key.domain_id ? (domainNames.get(key.domain_id) ?? key.domain_id) : html`<span class="muted">any</span>`}</td>
<td>${when(key.created_at)}</td>
<td>${when(key.last_used_at, 'never')}</td>
<td><form method="post" action="/dashboard/api-keys/${key.id}/delete" data-confirm="${confirm}">${csrfField(request)}<button type="submit" class="secondary">Delete<span class="visually-hidden"> ${key.name}</span></button></form></td>
</tr>`;
  })}`;
}

function createForm(request: FastifyRequest, domains: { id: string; name: string }[]): Html {
  return html`<section aria-labelledby="new-key"><h2 id="new-key">New API key</h2>
<form class="inline" method="post" action="/dashboard/api-keys">${csrfField(request)}
<label>Name<input name="name" maxlength="50" required></label>
<label>Permission<select name="permission"><option value="full_access">Full access</option><option value="sending_access">Sending access</option></select></label>
<label>Domain (sending access only)<select name="domain_id"><option value="">Any domain</option>${domains.map((d) => html`<option value="${d.id}">${d.name}</option>`)}</select></label>
<button type="submit">Create key</button>
</form></section>`;
}

export function apiKeyPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const }, schema: { hide: true } };

  app.get('/api-keys', route, async (request, reply) => {
    const query = request.query as Query;
    const [keys, domains] = await Promise.all([
      apiKeys.listApiKeys(ctx, request.session!.projectId, readPage(query, PAGE_SIZE)),
      listDomains(ctx, request.session!.projectId, { limit: DOMAIN_CHOICES, after: undefined, before: undefined }),
    ]);
    const domainNames = new Map(domains.data.map((d) => [d.id, d.name]));
    const content = html`<table class="list">
<caption class="visually-hidden">API keys, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Permission</th><th scope="col">Domain</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows(request, keys.data, domainNames)}</tbody>
</table>
${pager('/dashboard/api-keys', query, keys)}
${createForm(request, domains.data)}`;
    const notice = query.done ? NOTICES[query.done] : undefined;
    return reply.type(HTML).send(page('API keys', content, { section: 'api-keys', csrfToken: request.session!.csrfToken, notice }));
  });

  // Answered with the page itself, not a redirect: the token exists only in this response (no-store).
  app.post('/api-keys', route, async (request, reply) => {
    const form = request.body as Query;
    const created = await apiKeys.createApiKey(ctx, request.session!.projectId, { name: form.name, permission: form.permission, domain_id: form.domain_id || undefined });
    const content = html`<p class="warning" role="alert"><strong>Copy this token now: it will not be shown again.</strong> Mailroom keeps only its hash.</p>
<p class="secret"><code id="token">${created.token}</code> <button type="button" data-copy="${created.token}">Copy</button></p>
<p>Use it as <code>Authorization: Bearer …</code>, or with the SDK: <code>new Resend(token, { baseUrl })</code>.</p>
<p><a href="/dashboard/api-keys">Back to the API keys</a></p>`;
    return reply.status(201).type(HTML).send(page(`API key "${form.name ?? ''}" created`, content, { section: 'api-keys', csrfToken: request.session!.csrfToken }));
  });

  // Deleting the key this session signed in with ends the session (it joins its key): the redirect then
  // lands on the sign-in page.
  app.post('/api-keys/:id/delete', route, async (request, reply) => {
    await apiKeys.deleteApiKey(ctx, request.session!.projectId, pathId(request, 'id', 'API key'));
    return reply.redirect('/dashboard/api-keys?done=deleted', 303);
  });
}
