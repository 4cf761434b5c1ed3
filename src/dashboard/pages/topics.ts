import { csrfField } from '../page-parts.ts';
import { pathId } from '../path-id.ts';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import * as topics from '../../domain/contacts/topics.ts';
import { TopicBody } from '../../http/schemas/contacts.ts';
import { html } from '../html.ts';
import { pager, readPage } from '../paging.ts';
import { bodyCheck, formOf, sectionPage, textOf, type Form } from './contacts-section.ts';

// Topics: the list, creating one (POST /topics), and a topic's page to edit it (PATCH /topics/:id) or
// delete it (DELETE /topics/:id). The default subscription is chosen once, at creation.

const PAGE_SIZE = 50;
const dashboard = { access: 'dashboard' as const };
const readTopicForm = bodyCheck<topics.TopicInput>(TopicBody);

const SUBSCRIPTIONS = [
  ['opt_in', 'Opted in (contacts get it unless they opt out)'],
  ['opt_out', 'Opted out (contacts get it only once they opt in)'],
] as const;
const VISIBILITIES = [
  ['private', "Private (shown on the preferences page only to contacts who get it)"],
  ['public', "Public (shown on every contact's preferences page)"],
] as const;

const options = (choices: readonly (readonly [string, string])[], current: string) =>
  choices.map(([value, label]) => html`<option value="${value}"${value === current ? html` selected` : ''}>${label}</option>`);

export function topicPages(app: App, ctx: Context): void {
  app.get('/contacts/topics', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const query = request.query as Form;
    const result = await topics.listTopics(ctx, request.session!.projectId, readPage(query, PAGE_SIZE));
    const rows = result.data.length
      ? result.data.map(
          (t) => html`<tr>
<td><a href="/dashboard/contacts/topics/${t.id}">${t.name}</a></td>
<td>${t.description ?? ''}</td>
<td>${t.default_subscription === 'opt_in' ? 'opted in' : 'opted out'}</td>
<td>${t.visibility}</td>
</tr>`,
        )
      : html`<tr><td colspan="4">No topics.</td></tr>`;
    const content = html`<table class="list">
<caption class="visually-hidden">Topics, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Description</th><th scope="col">By default</th><th scope="col">Visibility</th></tr></thead>
<tbody>${rows}</tbody>
</table>
${pager('/dashboard/contacts/topics', {}, result)}
<section aria-labelledby="add-topic"><h2 id="add-topic">Create a topic</h2>
<form class="stacked" method="post" action="/dashboard/contacts/topics">${csrfField(request)}
<label>Name<input name="name" required maxlength="50" autocomplete="off"></label>
<label>Description<input name="description" maxlength="200" autocomplete="off"></label>
<label>Default subscription (fixed once created)<select name="default_subscription">${options(SUBSCRIPTIONS, 'opt_in')}</select></label>
<label>Visibility<select name="visibility">${options(VISIBILITIES, 'private')}</select></label>
<button type="submit">Create topic</button>
</form></section>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, 'Topics', 'Topics', content));
  });

  app.post('/contacts/topics', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const form = formOf(request);
    const input = { name: form.name?.trim() ?? '', description: textOf(form.description), default_subscription: form.default_subscription, visibility: form.visibility };
    const { id } = await topics.createTopic(ctx, request.session!.projectId, readTopicForm(input));
    return reply.redirect(`/dashboard/contacts/topics/${id}?done=created`, 303);
  });

  app.get('/contacts/topics/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const topic = await topics.findTopicOrThrow(ctx, request.session!.projectId, pathId(request, 'id', 'Topic'));
    const csrf = csrfField(request);
    const content = html`<dl class="facts">
<dt>Default subscription</dt><dd>${topic.default_subscription === 'opt_in' ? 'opted in' : 'opted out'} (fixed)</dd>
<dt>Created</dt><dd>${topic.created_at}</dd>
<dt>Id</dt><dd><code>${topic.id}</code></dd>
</dl>
<section aria-labelledby="edit"><h2 id="edit">Edit</h2>
<form class="stacked" method="post" action="/dashboard/contacts/topics/${topic.id}">${csrf}
<label>Name<input name="name" required maxlength="50" value="${topic.name}" autocomplete="off"></label>
<label>Description<input name="description" maxlength="200" value="${topic.description ?? ''}" autocomplete="off"></label>
<label>Visibility<select name="visibility">${options(VISIBILITIES, topic.visibility)}</select></label>
<button type="submit">Save</button>
</form></section>
<section aria-labelledby="delete"><h2 id="delete">Delete</h2>
<form method="post" action="/dashboard/contacts/topics/${topic.id}/delete" data-confirm="Delete the topic ${topic.name} and every contact's subscription to it?">${csrf}
<button type="submit" class="danger">Delete this topic</button></form></section>`;
    return reply.type('text/html; charset=utf-8').send(sectionPage(request, topic.name, 'Topics', content));
  });

  app.post('/contacts/topics/:id', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    const id = pathId(request, 'id', 'Topic');
    const form = formOf(request);
    await topics.updateTopic(ctx, request.session!.projectId, id, readTopicForm({ name: form.name?.trim() ?? '', description: textOf(form.description), visibility: form.visibility }));
    return reply.redirect(`/dashboard/contacts/topics/${id}?done=saved`, 303);
  });

  app.post('/contacts/topics/:id/delete', { config: dashboard, schema: { hide: true } }, async (request, reply) => {
    await topics.deleteTopic(ctx, request.session!.projectId, pathId(request, 'id', 'Topic'));
    return reply.redirect('/dashboard/contacts/topics?done=deleted', 303);
  });
}
