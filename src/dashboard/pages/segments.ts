import { csrfField, when } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import * as segments from '../../domain/contacts/segments.ts';
import { SegmentBody } from '../../http/schemas/contacts.ts';
import { html } from '../html.ts';
import { pager, readPage } from '../paging.ts';
import { contactTable } from './contact-table.ts';
import { bodyCheck, formOf, sectionPage, type Form } from './contacts-section.ts';

// Segments: the list, creating and deleting one (POST /segments, DELETE /segments/:id), and a
// segment's contacts (GET /segments/:id/contacts).

const PAGE_SIZE = 50;
const dashboard = { access: 'dashboard' as const };
const checkSegment = bodyCheck<{ name?: string }>(SegmentBody);

export function segmentPages(app: App, ctx: Context): void {
  app.get('/contacts/segments', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Form;
    const result = await segments.listSegments(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const csrf = csrfField(request);
    const rows = result.data.length
      ? result.data.map(
          (s) => html`<tr>
<td><a href="/dashboard/contacts/segments/${s.id}">${s.name}</a></td>
<td>${when(s.created_at)}</td>
<td><form class="inline" method="post" action="/dashboard/contacts/segments/${s.id}/delete" data-confirm="Delete the segment ${s.name}? Its contacts stay.">${csrf}<button type="submit" class="secondary" aria-label="Delete ${s.name}">Delete</button></form></td>
</tr>`,
        )
      : html`<tr><td colspan="3">No segments.</td></tr>`;
    const content = html`<table class="list">
<caption class="visually-hidden">Segments, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${pager('/dashboard/contacts/segments', {}, result)}
<section aria-labelledby="add-segment"><h2 id="add-segment">Create a segment</h2>
<form class="inline" method="post" action="/dashboard/contacts/segments">${csrf}
<label>Name<input name="name" required autocomplete="off"></label>
<button type="submit">Create segment</button>
</form></section>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, 'Segments', 'Segments', content));
  });

  app.post('/contacts/segments', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const segment = await segments.createSegment(ctx, request.session!.projectId, checkSegment({ name: formOf(request).name ?? '' }));
    return reply.redirect(`/dashboard/contacts/segments/${segment.id}?done=created`, 303);
  });

  app.get('/contacts/segments/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const segment = await segments.findSegmentOrThrow(ctx, request.session!.projectId, pathId(request, 'id', 'Segment'));
    const query = request.query as Form;
    const result = await contacts.listContacts(ctx, request.session!.projectId, readPage(query, PAGE_SIZE), segment.id);
    const content = html`<dl class="facts"><dt>Id</dt><dd><code>${segment.id}</code></dd><dt>Created</dt><dd>${segment.created_at}</dd></dl>
<h2>Contacts</h2>
${contactTable(result.data, `Contacts of ${segment.name}`)}
${pager(`/dashboard/contacts/segments/${segment.id}`, {}, result)}
<p>Add contacts to this segment from a contact's page.</p>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, segment.name, 'Segments', content));
  });

  app.post('/contacts/segments/:id/delete', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await segments.deleteSegment(ctx, request.session!.projectId, pathId(request, 'id', 'Segment'));
    return reply.redirect('/dashboard/contacts/segments?done=deleted', 303);
  });
}
