import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../app.ts';
import type { Context } from '../../context.ts';
import { switchProject } from '../../domain/api-keys/dashboard-sessions.ts';
import * as projects from '../../domain/projects/projects.ts';
import { projectUsage } from '../../domain/projects/usage.ts';
import { AppError } from '../../errors.ts';
import type { ProjectCounts } from '../../store/project-usage.ts';
import { html, type Html } from '../html.ts';
import { page } from '../layout.ts';
import { csrfField, when } from '../page-parts.ts';
import { pager, readPage } from '../paging.ts';
import { pathId } from '../path-id.ts';

// Projects, for the admin key's session alone (docs/projects.md): the list with each project's usage, a
// new project (its first key shown once, on the answer to the POST itself, never in a URL, a redirect
// or a log), a project's page to change or delete it, and the switcher: the admin browses the project
// it picks as that project's own key would, under a banner that names it. Over the domain functions
// of /projects.

const PAGE_SIZE = 50;
const HTML = 'text/html; charset=utf-8';
type Query = Record<string, string | undefined>;
type Project = Awaited<ReturnType<typeof projects.getProject>>;

/** What the last change did, named in the redirect: fixed texts only. */
const NOTICES: Record<string, string> = {
  updated: 'The project was changed.',
  deleted: 'The project was deleted.',
  removing: 'The project was deleted: its keys stopped working, and everything else it owned is being removed in the background.',
};

const NO_COUNTS: ProjectCounts = { sent_today: 0, sent_this_month: 0, domains: 0, api_keys: 0 };

const plural = (n: number, one: string, many: string) => `${n} ${n === 1 ? one : many}`;

function limits(project: Project): string {
  const parts = [
    project.rate_limit === null ? '' : `${project.rate_limit} requests/s`,
    project.daily_quota === null ? '' : `${project.daily_quota} a day`,
    project.monthly_quota === null ? '' : `${project.monthly_quota} a month`,
    project.has_smtp_url ? 'own relay' : '',
  ].filter(Boolean);
  return parts.length === 0 ? 'none' : parts.join(', ');
}

const browseForm = (request: FastifyRequest, project: Project) =>
  html`<form class="inline" method="post" action="/dashboard/projects/${project.id}/switch">${csrfField(request)}<button type="submit">Browse<span class="visually-hidden"> ${project.name}</span></button></form>`;

function rows(request: FastifyRequest, list: Project[], usage: Map<string, ProjectCounts>): Html {
  if (list.length === 0) return html`<tr><td colspan="8">No projects.</td></tr>`;
  const browsing = request.signedIn!.projectId;
  return html`${list.map((project) => {
    const counts = usage.get(project.id) ?? NO_COUNTS;
    return html`<tr>
<td><a href="/dashboard/projects/${project.id}">${project.name}</a>${project.id === browsing ? html` <span class="tag">browsing</span>` : ''}</td>
<td>${counts.sent_today}</td>
<td>${counts.sent_this_month}</td>
<td>${counts.domains}</td>
<td>${counts.api_keys}</td>
<td>${limits(project)}</td>
<td>${when(project.created_at)}</td>
<td>${browseForm(request, project)}</td>
</tr>`;
  })}`;
}

/** The fields of a project's limits and relay, empty or as they are. */
function limitFields(project?: Project): Html {
  const count = (name: string, label: string, value: number | null | undefined) =>
    html`<label>${label}<input name="${name}" type="number" min="1" step="1" inputmode="numeric" value="${value ?? ''}" placeholder="none"></label>`;
  return html`${count('rate_limit', 'Rate limit (requests/s)', project?.rate_limit)}
${count('daily_quota', 'Daily quota', project?.daily_quota)}
${count('monthly_quota', 'Monthly quota', project?.monthly_quota)}
<label>${project?.has_smtp_url ? 'New relay (blank: keep it)' : 'Relay (smtp:// or smtps://)'}<input name="smtp_url" autocomplete="off" spellcheck="false" placeholder="smtps://user:pass@smtp.example.com:465"></label>`;
}

function createForm(request: FastifyRequest): Html {
  return html`<section aria-labelledby="new-project"><h2 id="new-project">New project</h2>
<form class="inline" method="post" action="/dashboard/projects">${csrfField(request)}
<label>Name<input name="name" maxlength="50" required></label>
${limitFields()}
<button type="submit">Create project</button>
</form>
<p class="muted">Limits left empty: none (the install’s rate limit, no quota, the install’s transport).</p></section>`;
}

/** A form's limit field: empty is none (null), anything else a number the domain checks (a word is NaN, refused with the field's name). */
const countOf = (value: string | undefined) => (value === undefined || value.trim() === '' ? null : Number(value));

function inputOf(form: Query, creating: boolean): projects.ProjectInput {
  const smtpUrl = form.smtp_url?.trim() ?? '';
  return {
    name: form.name,
    rate_limit: countOf(form.rate_limit),
    daily_quota: countOf(form.daily_quota),
    monthly_quota: countOf(form.monthly_quota),
    // Changing a project, an empty relay keeps the one it has (it is never shown); the box removes it.
    smtp_url: form.remove_relay !== undefined ? null : smtpUrl !== '' ? smtpUrl : creating ? null : undefined,
  };
}

const send = (reply: FastifyReply, request: FastifyRequest, title: string, content: Html, notice?: string, status = 200) =>
  reply.status(status).type(HTML).send(page(title, content, { section: 'projects', csrfToken: request.signedIn!.csrfToken, notice }));

/** A project's page: its facts and usage, the form that changes it, Browse, and Delete (with everything it owns, after a refusal). */
async function projectPage(ctx: Context, request: FastifyRequest, reply: FastifyReply, id: string, refused?: string) {
  const project = await projects.getProject(ctx, id);
  const counts = (await projectUsage(ctx, [id])).get(id) ?? NO_COUNTS;
  const notice = NOTICES[(request.query as Query).done ?? ''];
  const holdings = `${plural(counts.domains, 'domain', 'domains')} and ${plural(counts.api_keys, 'API key', 'API keys')}`;
  const force = html`<p class="warning">Deleting it with everything it owns removes its ${holdings}, and its emails, contacts, broadcasts, templates,
webhooks and logs, for good. Its keys stop working at once; the rest goes in the background.</p>
<form class="inline" method="post" action="/dashboard/projects/${id}/delete" data-confirm="${`Delete the project "${project.name}" and everything it owns? This cannot be undone.`}">${csrfField(request)}
<input type="hidden" name="force" value="true"><button type="submit" class="danger">Delete with everything it owns</button></form>`;
  const content = html`${refused ? html`<p class="error" role="alert">${refused}</p>` : ''}<dl class="facts">
<dt>Sent today</dt><dd>${counts.sent_today}</dd>
<dt>Sent this month</dt><dd>${counts.sent_this_month}</dd>
<dt>Domains</dt><dd>${counts.domains}</dd>
<dt>API keys</dt><dd>${counts.api_keys}</dd>
<dt>Limits</dt><dd>${limits(project)}</dd>
<dt>Created</dt><dd>${when(project.created_at)}</dd>
<dt>Id</dt><dd><code>${id}</code></dd>
</dl>
<div class="actions">${browseForm(request, project)}</div>
<section aria-labelledby="change"><h2 id="change">Change</h2>
<form class="inline" method="post" action="/dashboard/projects/${id}">${csrfField(request)}
<label>Name<input name="name" maxlength="50" required value="${project.name}"></label>
${limitFields(project)}
${project.has_smtp_url ? html`<label><input type="checkbox" name="remove_relay" value="true"> Remove its relay</label>` : ''}
<button type="submit">Save</button>
</form></section>
<section aria-labelledby="delete"><h2 id="delete">Delete</h2>
${
  refused
    ? force
    : html`<p>A project with domains or keys is not deleted unless you ask for everything it owns to go with it.</p>
<form class="inline" method="post" action="/dashboard/projects/${id}/delete" data-confirm="${`Delete the project "${project.name}"?`}">${csrfField(request)}<button type="submit" class="secondary">Delete project</button></form>`
}</section>`;
  return send(reply, request, project.name, content, notice, refused ? 409 : 200);
}

export function projectPages(app: App, ctx: Context): void {
  const route = { config: { access: 'dashboard' as const, needs: 'admin' as const }, schema: { hide: true } };

  app.get('/projects', route, async (request, reply) => {
    const query = request.query as Query;
    const list = await projects.listProjects(ctx, readPage(query, PAGE_SIZE));
    const usage = await projectUsage(ctx, list.data.map((project) => project.id));
    const content = html`<table class="list">
<caption class="visually-hidden">Projects, newest first, with the emails they sent (UTC days and months)</caption>
<thead><tr><th scope="col">Name</th><th scope="col">Sent today</th><th scope="col">Sent this month</th><th scope="col">Domains</th><th scope="col">API keys</th><th scope="col">Limits</th><th scope="col">Created</th><th scope="col">Actions</th></tr></thead>
<tbody>${rows(request, list.data, usage)}</tbody>
</table>
${pager('/dashboard/projects', query, list)}
<p>Browse a project to see its emails, domains, keys and everything else as its own key does.</p>
${createForm(request)}`;
    return send(reply, request, 'Projects', content, NOTICES[query.done ?? '']);
  });

  // Answered with the page itself, not a redirect: the token exists only in this response (no-store).
  // data-shown-once makes the script drop the POST from the history: a reload then shows the list.
  app.post('/projects', route, async (request, reply) => {
    const created = await projects.createProject(ctx, inputOf(request.body as Query, true));
    const content = html`<p class="warning" role="alert"><strong>Copy this token now: it will not be shown again.</strong> Mailroom keeps only its hash.</p>
<p class="secret" data-shown-once><code id="token">${created.api_key.token}</code> <button type="button" data-copy="${created.api_key.token}">Copy</button></p>
<p>It is the project’s first key, with full access: its applications send with it (<code>Authorization: Bearer …</code>), and it signs in to the dashboard.</p>
<div class="actions"><form class="inline" method="post" action="/dashboard/projects/${created.id}/switch">${csrfField(request)}<button type="submit">Browse ${created.name}</button></form>
<a href="/dashboard/projects">Back to the projects</a></div>`;
    return send(reply, request, `Project "${created.name}" created`, content, undefined, 201);
  });

  app.get('/projects/:id', route, async (request, reply) => projectPage(ctx, request, reply, pathId(request, 'id', 'Project')));

  app.post('/projects/:id', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Project');
    await projects.updateProject(ctx, id, inputOf(request.body as Query, false));
    return reply.redirect(`/dashboard/projects/${id}?done=updated`, 303);
  });

  app.post('/projects/:id/delete', route, async (request, reply) => {
    const id = pathId(request, 'id', 'Project');
    const force = (request.body as Query).force === 'true';
    try {
      await projects.deleteProject(ctx, id, force);
    } catch (error) {
      if (!(error instanceof AppError) || error.code !== 'project_not_empty') throw error;
      const counts = (await projectUsage(ctx, [id])).get(id) ?? NO_COUNTS;
      const holds = `${plural(counts.domains, 'domain', 'domains')} and ${plural(counts.api_keys, 'API key', 'API keys')}`;
      return projectPage(ctx, request, reply, id, `Not deleted: the project has ${holds}. Delete them first, or delete the project with everything it owns.`);
    }
    return reply.redirect(`/dashboard/projects?done=${force ? 'removing' : 'deleted'}`, 303);
  });

  // The switcher: the session browses the project from now on, as its own key's session would.
  app.post('/projects/:id/switch', route, async (request, reply) => {
    await switchProject(ctx, request.signedIn!, pathId(request, 'id', 'Project'));
    return reply.redirect('/dashboard/emails', 303);
  });
}

/**
 * onSend hook of the dashboard: the admin browsing a project sees, above every page of it, which
 * project it is and the way back to the list. Put in the rendered page rather than passed to each of
 * them; the layout writes `<main id="main"` once, before any content, which is escaped.
 */
export async function withProjectBanner(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  const session = request.session;
  if (!session?.admin || request.routeOptions.config.needs === 'admin' || typeof payload !== 'string') return payload;
  if (!String(reply.getHeader('content-type') ?? '').startsWith('text/html')) return payload;
  const banner = html`<aside class="project-banner" aria-label="Project"><p>Browsing the project <strong>${session.projectName ?? ''}</strong> as the admin.
<a href="/dashboard/projects">Back to the projects</a></p></aside>
`;
  return payload.replace('<main id="main"', `${banner.text}<main id="main"`);
}
