import { csrfField } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import { Type } from 'typebox';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import type { TopicRef } from '../../domain/contacts/contact-input.ts';
import * as contacts from '../../domain/contacts/contacts.ts';
import { listProperties } from '../../domain/contacts/contact-properties.ts';
import * as segments from '../../domain/contacts/segments.ts';
import * as topics from '../../domain/contacts/topics.ts';
import { TopicRefs, UpdateContactBody } from '../../http/schemas/contacts.ts';
import { allRows, type PageRequest } from '../../store/paginate.ts';
import { html } from '../html.ts';
import { bodyCheck, formOf, propertyValueOf, sectionPage, textOf } from './contacts-section.ts';

// A contact: its fields and property values (edited as PATCH /contacts/:id does), its segments (joined
// and left as POST and DELETE /contacts/:id/segments/:segment_id) and its topic subscriptions (set as
// PATCH /contacts/:id/topics).

const dashboard = { access: 'dashboard' as const };
const EVERYTHING: PageRequest = { limit: undefined, after: undefined, before: undefined };
// Topics and properties are lists that always paginate: the form shows the first hundred.
const FIRST_100: PageRequest = { limit: 100, after: undefined, before: undefined };

const checkUpdate = bodyCheck<contacts.UpdateContactInput>(UpdateContactBody);
const checkTopics = bodyCheck<{ topics: TopicRef[] }>(Type.Object({ topics: TopicRefs }));

export function contactDetailPages(app: App, ctx: Context): void {
  app.get('/contacts/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Contact');
    const contact = await contacts.getContact(ctx, request.session!.projectId, id);
    const [memberOf, allSegments, subscriptions, properties] = await Promise.all([
      segments.listContactSegments(ctx, request.session!.projectId, id, EVERYTHING).then(allRows),
      segments.listSegments(ctx, request.session!.projectId, EVERYTHING).then(allRows),
      topics.listContactTopics(ctx, request.session!.projectId, id, FIRST_100),
      listProperties(ctx, request.session!.projectId, FIRST_100),
    ]);
    const csrf = csrfField(request);
    const joinable = allSegments.filter((s) => !memberOf.some((m) => m.id === s.id));
    const value = (key: string) => contact.properties[key]?.value;
    const name = [contact.first_name, contact.last_name].filter(Boolean).join(' ');

    const facts = html`<dl class="facts">
<dt>Email</dt><dd>${contact.email} <button type="button" class="secondary" data-copy="${contact.email}">Copy</button></dd>
<dt>Name</dt><dd>${name || '(none)'}</dd>
<dt>Subscription</dt><dd>${contact.unsubscribed ? html`<span class="status status-unsubscribed">unsubscribed from everything</span>` : html`<span class="status">subscribed</span>`}</dd>
${Object.entries(contact.properties).map(([key, p]) => html`<dt><code>${key}</code></dt><dd>${String(p.value)}</dd>`)}
<dt>Created</dt><dd>${contact.created_at}</dd>
<dt>Id</dt><dd><code>${contact.id}</code></dd>
</dl>`;

    const edit = html`<section aria-labelledby="edit"><h2 id="edit">Edit</h2>
<form class="stacked" method="post" action="/dashboard/contacts/${id}">${csrf}
<label>First name<input name="first_name" value="${contact.first_name ?? ''}" autocomplete="off"></label>
<label>Last name<input name="last_name" value="${contact.last_name ?? ''}" autocomplete="off"></label>
<label class="check"><input type="checkbox" name="unsubscribed" value="yes"${contact.unsubscribed ? html` checked` : ''}> Unsubscribed from all email</label>
${properties.data.map(
      (p) => html`<label>${p.key} (${p.type}${p.fallback_value !== null ? `, else ${p.fallback_value}` : ''})<input name="property.${p.key}"${p.type === 'number' ? html` inputmode="decimal"` : ''} value="${value(p.key) ?? ''}" autocomplete="off"></label>`,
    )}
<button type="submit">Save</button>
</form></section>`;

    const segmentList = html`<section aria-labelledby="segments"><h2 id="segments">Segments</h2>
${memberOf.length === 0 ? html`<p>In no segment.</p>` : ''}
<ul class="memberships">${memberOf.map(
      (s) => html`<li><a href="/dashboard/contacts/segments/${s.id}">${s.name}</a>
<form class="inline" method="post" action="/dashboard/contacts/${id}/segments/${s.id}/remove">${csrf}<button type="submit" class="secondary" aria-label="Remove from ${s.name}">Remove</button></form></li>`,
    )}</ul>
${joinable.length ? html`<form class="inline" method="post" action="/dashboard/contacts/${id}/segments">${csrf}
<label>Segment<select name="segment_id">${joinable.map((s) => html`<option value="${s.id}">${s.name}</option>`)}</select></label>
<button type="submit">Add to segment</button></form>` : ''}
</section>`;

    const topicList = html`<section aria-labelledby="topics"><h2 id="topics">Topics</h2>
${subscriptions.data.length === 0 ? html`<p>No topics yet: <a href="/dashboard/contacts/topics">create one</a>.</p>` : html`<form method="post" action="/dashboard/contacts/${id}/topics">${csrf}
<table class="list"><caption class="visually-hidden">Topic subscriptions</caption>
<thead><tr><th scope="col">Topic</th><th scope="col">Description</th><th scope="col">Subscription</th></tr></thead>
<tbody>${subscriptions.data.map(
      (t) => html`<tr><td>${t.name}</td><td>${t.description ?? ''}</td><td><label><span class="visually-hidden">Subscription to ${t.name}</span><select name="topic.${t.id}">${['opt_in', 'opt_out'].map(
        (s) => html`<option value="${s}"${t.subscription === s ? html` selected` : ''}>${s === 'opt_in' ? 'opted in' : 'opted out'}</option>`,
      )}</select></label></td></tr>`,
    )}</tbody></table>
${subscriptions.has_more ? html`<p>The first 100 topics.</p>` : ''}
<button type="submit">Save subscriptions</button></form>`}
</section>`;

    const remove = html`<section aria-labelledby="delete"><h2 id="delete">Delete</h2>
<form method="post" action="/dashboard/contacts/${id}/delete" data-confirm="Delete ${contact.email}? Its segments, topics and property values go with it.">${csrf}
<button type="submit" class="danger">Delete this contact</button></form></section>`;

    const content = html`${facts}${edit}${segmentList}${topicList}${remove}`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, contact.email, 'Contacts', content));
  });

  // Each property field present in the form is set, or cleared when empty, as PATCH's `properties` does.
  app.post('/contacts/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Contact');
    const form = formOf(request);
    const definitions = await listProperties(ctx, request.session!.projectId, FIRST_100);
    const properties = Object.fromEntries(
      definitions.data.filter((p) => `property.${p.key}` in form).map((p) => [p.key, propertyValueOf(p.type, form[`property.${p.key}`])]),
    );
    const input = checkUpdate({ first_name: textOf(form.first_name), last_name: textOf(form.last_name), unsubscribed: form.unsubscribed === 'yes', properties });
    await contacts.updateContact(ctx, request.session!.projectId, id, input);
    return reply.redirect(`/dashboard/contacts/${id}?done=saved`, 303);
  });

  app.post('/contacts/:id/segments', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Contact');
    await segments.addContactToSegment(ctx, request.session!.projectId, id, formOf(request).segment_id ?? '');
    return reply.redirect(`/dashboard/contacts/${id}?done=added`, 303);
  });

  app.post('/contacts/:id/segments/:segment_id/remove', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Contact');
    await segments.removeContactFromSegment(ctx, request.session!.projectId, id, pathId(request, 'segment_id', 'Segment'));
    return reply.redirect(`/dashboard/contacts/${id}?done=removed`, 303);
  });

  app.post('/contacts/:id/topics', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Contact');
    const refs = Object.entries(formOf(request))
      .filter(([name]) => name.startsWith('topic.'))
      .map(([name, subscription]) => ({ id: name.slice('topic.'.length), subscription }));
    await topics.updateContactTopics(ctx, request.session!.projectId, id, checkTopics({ topics: refs as TopicRef[] }).topics);
    return reply.redirect(`/dashboard/contacts/${id}?done=saved`, 303);
  });
}
