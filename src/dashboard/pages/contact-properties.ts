import { csrfField } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as properties from '../../domain/contacts/contact-properties.ts';
import { PropertyBody } from '../../http/schemas/contacts.ts';
import { html } from '../html.ts';
import { pager, readPage } from '../paging.ts';
import { bodyCheck, formOf, propertyValueOf, sectionPage, type Form } from './contacts-section.ts';

// Contact properties: the list, creating one (POST /contact-properties) and deleting one with every
// contact's value for it (DELETE /contact-properties/:id). Key and type are fixed once created.

const PAGE_SIZE = 50;
const dashboard = { access: 'dashboard' as const };
const checkProperty = bodyCheck<properties.ContactPropertyInput>(PropertyBody);

export function contactPropertyPages(app: App, ctx: Context): void {
  app.get('/contacts/properties', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Form;
    const result = await properties.listProperties(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const csrf = csrfField(request);
    const rows = result.data.length
      ? result.data.map(
          (p) => html`<tr>
<td><code>${p.key}</code></td>
<td>${p.type}</td>
<td>${p.fallback_value === null ? '' : String(p.fallback_value)}</td>
<td><form class="inline" method="post" action="/dashboard/contacts/properties/${p.id}/delete" data-confirm="Delete the property ${p.key} and every contact's value for it?">${csrf}<button type="submit" class="secondary" aria-label="Delete ${p.key}">Delete</button></form></td>
</tr>`,
        )
      : html`<tr><td colspan="4">No contact properties.</td></tr>`;
    const content = html`<table class="list">
<caption class="visually-hidden">Contact properties, newest first</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Type</th><th scope="col">Fallback</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${pager('/dashboard/contacts/properties', {}, result)}
<section aria-labelledby="add-property"><h2 id="add-property">Create a property</h2>
<form class="inline" method="post" action="/dashboard/contacts/properties">${csrf}
<label>Key (letters, digits, _)<input name="key" required pattern="[A-Za-z0-9_]{1,50}" autocomplete="off"></label>
<label>Type<select name="type"><option value="string">string</option><option value="number">number</option></select></label>
<label>Fallback value (optional)<input name="fallback_value" autocomplete="off"></label>
<button type="submit">Create property</button>
</form></section>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, 'Contact properties', 'Properties', content));
  });

  app.post('/contacts/properties', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const form = formOf(request);
    const type = form.type ?? '';
    await properties.createProperty(ctx, request.session!.projectId, checkProperty({ key: form.key?.trim() ?? '', type, fallback_value: propertyValueOf(type, form.fallback_value) }));
    return reply.redirect('/dashboard/contacts/properties?done=created', 303);
  });

  app.post('/contacts/properties/:id/delete', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await properties.deleteProperty(ctx, request.session!.projectId, pathId(request, 'id', 'Contact property'));
    return reply.redirect('/dashboard/contacts/properties?done=deleted', 303);
  });
}
