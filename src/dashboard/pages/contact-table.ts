import type * as contacts from '../../domain/contacts/contacts.ts';
import { when } from '../page-parts.ts';
import { html, type Html } from '../html.ts';

type ContactItem = Awaited<ReturnType<typeof contacts.listContacts>>['data'][number];

/** A table of contacts: the contacts list, and a segment's page. */
export function contactTable(list: ContactItem[], caption: string): Html {
  const rows = list.length
    ? list.map(
        (c) => html`<tr>
<td><a href="/dashboard/contacts/${c.id}">${c.email}</a></td>
<td>${[c.first_name, c.last_name].filter(Boolean).join(' ')}</td>
<td>${c.unsubscribed ? html`<span class="status status-unsubscribed">unsubscribed</span>` : html`<span class="status">subscribed</span>`}</td>
<td>${when(c.created_at)}</td>
</tr>`,
      )
    : html`<tr><td colspan="4">No contacts.</td></tr>`;
  return html`<table class="list">
<caption class="visually-hidden">${caption}</caption>
<thead><tr><th scope="col">Email</th><th scope="col">Name</th><th scope="col">Subscription</th><th scope="col">Created</th></tr></thead>
<tbody>${rows}</tbody>
</table>`;
}
