import { csrfField } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import { CreateContactBody } from '../../http/schemas/contacts.ts';
import { html } from '../html.ts';
import { pager, readPage } from '../paging.ts';
import { contactDetailPages } from './contact-detail.ts';
import { contactTable } from './contact-table.ts';
import { contactPropertyPages } from './contact-properties.ts';
import { bodyCheck, formOf, sectionPage, textOf, type Form } from './contacts-section.ts';
import { segmentPages } from './segments.ts';
import { topicPages } from './topics.ts';

// Contacts: the list (newest first, searched by email), adding and deleting a contact, over the same
// domain functions as GET, POST and DELETE /contacts; then the section's other pages.

const PAGE_SIZE = 50;
const dashboard = { access: 'dashboard' as const };
const checkCreate = bodyCheck<contacts.CreateContactInput>(CreateContactBody);

export function contactPages(app: App, ctx: Context): void {
  app.get('/contacts', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Form;
    const email = query.email?.trim() || undefined;
    const result = await contacts.listContacts(ctx, request.session!.projectId, readPage(query, PAGE_SIZE), undefined, { email });
    const content = html`<form class="filters" method="get" action="/dashboard/contacts" role="search">
<label>Email contains<input type="search" name="email" value="${email ?? ''}"></label>
<button type="submit">Search</button> <a href="/dashboard/contacts">Clear</a>
</form>
${contactTable(result.data, 'Contacts, newest first')}
${pager('/dashboard/contacts', { email }, result)}
<section aria-labelledby="add-contact"><h2 id="add-contact">Add a contact</h2>
<form class="inline" method="post" action="/dashboard/contacts">${csrfField(request)}
<label>Email<input type="email" name="email" required autocomplete="off"></label>
<label>First name<input name="first_name" autocomplete="off"></label>
<label>Last name<input name="last_name" autocomplete="off"></label>
<button type="submit">Add contact</button>
</form></section>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, 'Contacts', 'Contacts', content));
  });

  // An email that is a contact already leads to that contact, as POST /contacts answers its id.
  app.post('/contacts', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const form = formOf(request);
    const { id } = await contacts.createContact(ctx, request.session!.projectId, checkCreate({ email: form.email ?? '', first_name: textOf(form.first_name), last_name: textOf(form.last_name) }));
    return reply.redirect(`/dashboard/contacts/${id}?done=created`, 303);
  });

  app.post('/contacts/:id/delete', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await contacts.deleteContact(ctx, request.session!.projectId, pathId(request, 'id', 'Contact'));
    return reply.redirect('/dashboard/contacts?done=deleted', 303);
  });

  contactDetailPages(app, ctx);
  segmentPages(app, ctx);
  topicPages(app, ctx);
  contactPropertyPages(app, ctx);
}
