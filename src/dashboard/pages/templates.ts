import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { previewTemplate, renderPreview } from '../../domain/templates/preview-template.ts';
import * as templates from '../../domain/templates/templates.ts';
import { csrfField, status, when } from '../page-parts.ts';
import { html } from '../html.ts';
import { page } from '../layout.ts';
import { messageFrame, sandboxedHtml } from '../message-view.ts';
import { pager, readPage } from '../paging.ts';

// Templates: the list, and a template's detail (its fields, its variables, a preview rendered with
// sample values, and Publish), over the same domain functions as GET /templates, GET /templates/:id
// and POST /templates/:id/publish; the preview renders as sending does (preview-template.ts).

const PAGE_SIZE = 50;
type Query = Record<string, string | undefined>;

// Sample values travel in the query string under this prefix, apart from the page's own parameters.
const SAMPLE = 'sample.';


/** The sample values the query gives, by variable key. */
function samplesOf(query: Query): Record<string, string> {
  const samples: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) if (name.startsWith(SAMPLE) && value !== undefined) samples[name.slice(SAMPLE.length)] = value;
  return samples;
}

/** The query string of the sample values (for the preview's own URL), empty when there are none. */
function sampleQuery(samples: Record<string, string>): string {
  const params = new URLSearchParams(Object.entries(samples).map(([key, value]): [string, string] => [SAMPLE + key, value]));
  return params.size ? `?${params.toString()}` : '';
}

export function templatePages(app: App, ctx: Context): void {
  const dashboard = { access: 'dashboard' as const };

  app.get('/templates', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const result = await templates.listTemplates(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const rows = result.data.length
      ? result.data.map(
          (t) => html`<tr>
<td><a href="/dashboard/templates/${t.id}">${t.name}</a></td>
<td>${t.alias ? html`<code>${t.alias}</code>` : ''}</td>
<td>${status(t.status)}</td>
<td>${when(t.updated_at)}</td>
</tr>`,
        )
      : html`<tr><td colspan="4">No templates.</td></tr>`;
    const content = html`<table class="list">
<caption class="visually-hidden">Templates, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Alias</th><th scope="col">Status</th><th scope="col">Updated</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${pager('/dashboard/templates', query, result)}`;
    return reply.type('text/html; charset=utf-8').send(page('Templates', content, { section: 'templates', csrfToken: request.session!.csrfToken }));
  });

  app.get('/templates/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const template = await templates.getTemplate(ctx, request.session!.projectId, (request.params as { id: string }).id);
    const samples = samplesOf(query);
    const preview = renderPreview(template, samples);
    const path = `/dashboard/templates/${template.id}`;
    const csrf = csrfField(request);
    const publishNote = template.status === 'draft' ? 'A draft: sending with it needs it published.' : template.has_unpublished_versions ? 'Changed since it was published: sending uses the published version until it is published again.' : '';
    const content = html`<dl class="facts">
<dt>Status</dt><dd>${status(template.status)}${template.has_unpublished_versions ? html` <span class="tag">unpublished changes</span>` : ''}</dd>
<dt>Alias</dt><dd>${template.alias ? html`<code>${template.alias}</code>` : 'none'}</dd>
<dt>From</dt><dd>${template.from ?? 'none'}</dd>
<dt>Subject</dt><dd>${template.subject ?? 'none'}</dd>
${template.reply_to ? html`<dt>Reply-To</dt><dd>${template.reply_to.join(', ')}</dd>` : ''}
<dt>Created</dt><dd>${when(template.created_at)}</dd>
<dt>Updated</dt><dd>${when(template.updated_at)}</dd>
${template.published_at ? html`<dt>Published</dt><dd>${when(template.published_at)}</dd>` : ''}
<dt>Id</dt><dd><code>${template.id}</code> <button type="button" class="secondary" data-copy="${template.id}">Copy</button></dd>
</dl>
${publishNote ? html`<section aria-labelledby="publish"><h2 id="publish">Publish</h2><p>${publishNote}</p>
<form class="inline" method="post" action="${path}/publish">${csrf}<button type="submit">Publish</button></form></section>` : ''}
<section aria-labelledby="variables"><h2 id="variables">Variables</h2>
${template.variables.length ? html`<table class="list"><caption class="visually-hidden">Declared variables</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Fallback</th></tr></thead>
<tbody>${template.variables.map((v) => html`<tr><td><code>${v.key}</code></td><td>${v.type}</td><td>${v.fallback_value === null ? 'none' : String(v.fallback_value)}</td></tr>`)}</tbody></table>` : html`<p>None declared.</p>`}
</section>
<section aria-labelledby="preview"><h2 id="preview">Preview</h2>
<p>Rendered as sending renders it, with these sample values; an empty field takes the fallback, or shows the variable's name.</p>
${template.variables.length ? html`<form class="filters" method="get" action="${path}">${template.variables.map(
      (v) => html`<label>${v.key}<input name="${SAMPLE}${v.key}" value="${samples[v.key] ?? ''}" placeholder="${v.fallback_value === null ? v.key : String(v.fallback_value)}"></label>`,
    )}<button type="submit">Preview</button></form>` : ''}
${preview.subject !== null ? html`<dl class="facts"><dt>Subject</dt><dd class="preview-subject">${preview.subject}</dd></dl>` : ''}
</section>
${messageFrame(`${path}/preview${sampleQuery(samples)}`, preview.html ?? '')}
${preview.text !== null ? html`<section aria-labelledby="text"><h2 id="text">Text</h2><pre class="text">${preview.text}</pre></section>` : ''}`;
    const notice = query.done === 'published' ? 'The template is published: sending uses this version.' : undefined;
    return reply.type('text/html; charset=utf-8').send(page(template.name, content, { section: 'templates', csrfToken: request.session!.csrfToken, notice }));
  });

  app.get('/templates/:id/preview', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Query;
    const preview = await previewTemplate(ctx, request.session!.projectId, (request.params as { id: string }).id, samplesOf(query));
    return sandboxedHtml(reply, preview.html, query.images === 'show');
  });

  app.post('/templates/:id/publish', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const { id } = await templates.publishTemplate(ctx, request.session!.projectId, (request.params as { id: string }).id);
    return reply.redirect(`/dashboard/templates/${id}?done=published`, 303);
  });
}
