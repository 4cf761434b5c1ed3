import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as suppressions from '../../domain/suppressions/suppressions.ts';
import type { SuppressionOrigin } from '../../store/schema.ts';
import { when } from '../page-parts.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { pager, readPage } from '../paging.ts';

// The suppression list: newest first, filtered by origin, with a form that adds an address and a
// button on each entry that removes it; the domain functions of GET, POST and DELETE /suppressions.

const PAGE_SIZE = 50;
const ORIGINS: readonly SuppressionOrigin[] = ['bounce', 'complaint', 'manual'];
/** What the last change did, named in the redirect: fixed texts, so a link cannot make the page say anything else. */
const NOTICES: Record<string, string> = { added: 'The address is on the list: nothing more is sent to it.', removed: 'The address is off the list: mail to it goes out again.' };
type Query = Record<string, string | undefined>;

const originOf = (value: string | undefined) => ORIGINS.find((origin) => origin === value);

function rows(list: Awaited<ReturnType<typeof suppressions.listSuppressions>>['data'], csrfToken: string): Html {
  if (list.length === 0) return html`<tr><td colspan="5">No suppressed addresses.</td></tr>`;
  return html`${list.map(
    (s) => html`<tr>
<td>${s.email}</td>
<td><span class="tag">${s.origin}</span></td>
<td>${s.source_id ? html`<a href="/dashboard/emails/${s.source_id}">The email</a>` : ''}</td>
<td>${when(s.created_at)}</td>
<td><form class="inline" method="post" action="/dashboard/suppressions/${s.id}/remove" data-confirm="Remove ${s.email} from the suppression list? Mail to it will go out again.">
<input type="hidden" name="_csrf" value="${csrfToken}"><button type="submit" class="secondary" aria-label="Remove ${s.email}">Remove</button></form></td>
</tr>`,
  )}`;
}

export function suppressionPages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/suppressions', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const csrfToken = request.session!.csrfToken;
    const origin = originOf(query.origin);
    const result = await suppressions.listSuppressions(ctx, request.session!.projectId, origin, readPage(query, PAGE_SIZE));
    const content = html`<form class="inline" method="post" action="/dashboard/suppressions">
<input type="hidden" name="_csrf" value="${csrfToken}">
<label>Address to suppress<input type="email" name="email" required autocomplete="off"></label>
<button type="submit">Add</button>
</form>
<form class="filters" method="get" action="/dashboard/suppressions">
<label>Origin<select name="origin"><option value="">any</option>${ORIGINS.map(
      (o) => html`<option value="${o}"${origin === o ? html` selected` : ''}>${o}</option>`,
    )}</select></label>
<button type="submit">Filter</button> <a href="/dashboard/suppressions">Clear</a>
</form>
<table class="list">
<caption class="visually-hidden">Suppressed addresses, newest first</caption>
<thead><tr><th scope="col">Address</th><th scope="col">Origin</th><th scope="col">Source</th><th scope="col">Added</th><th scope="col">Action</th></tr></thead>
<tbody>${rows(result.data, csrfToken)}</tbody>
</table>
${pager('/dashboard/suppressions', { origin, after: query.after, before: query.before }, result)}`;
    const notice = query.done ? NOTICES[query.done] : undefined;
    return reply.type('text/html; charset=utf-8').send(page('Suppressions', content, { section: 'suppressions', csrfToken, notice }));
  });

  app.post('/suppressions', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await suppressions.addSuppression(ctx, request.session!.projectId, (request.body as Query).email ?? '');
    return reply.redirect('/dashboard/suppressions?done=added', 303);
  });

  app.post('/suppressions/:id/remove', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await suppressions.removeSuppression(ctx, request.session!.projectId, (request.params as { id: string }).id);
    return reply.redirect('/dashboard/suppressions?done=removed', 303);
  });
}
